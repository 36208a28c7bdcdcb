// Package carrier defines the frame in which a Runner with Config.Carry
// stores a value together with the bytes its Add carried (a trace
// context), so that they reach the handler in whichever process leases the
// value. It is the one definition of the frame: the engine over a store
// writes and reads it, and tools that show stored values (a console, a
// command line) Strip it.
//
// A framed value is
//
//	0xFF, n, n bytes carried, then the Codec's bytes
//
// with n at most MaxCarried, so that a frame adds at most Overhead bytes.
// A frame with n = 0 only escapes Codec's bytes that begin with 0xFF
// themselves, so its third byte is 0xFF; other bytes that begin 0xFF 0x00
// are no frame.
// 0xFF is a byte that UTF-8 text never holds, so the bytes of a text codec
// (JSON, the default) never begin like a frame; the bytes 0xF8 to 0xFE,
// which UTF-8 never holds either, are kept for other versions of the
// frame. A Runner without Carry frames nothing: its values are stored as
// the Codec's bytes, with not a byte more.
package carrier

// Marker is the first byte of a framed value.
const Marker = 0xFF

// MaxCarried is the most bytes a frame carries: the 26 of a W3C trace
// context (a version, the trace ID, the span ID and the flags) fit with
// room to spare, and a length below 0x80 never reads as the length of a
// gob message that begins with 0xFF (a length byte count, then the
// length's bytes, the first of them 0x80 or more).
const MaxCarried = 58

// Overhead is the most bytes a frame adds to the Codec's bytes.
const Overhead = 2 + MaxCarried

// Frame returns payload framed with carried, or payload itself when
// carried is empty and payload cannot be mistaken for a frame: a value
// that carries nothing then costs no byte more. It panics if carried is
// longer than MaxCarried; callers check it first (see Fits).
//
// O(len(carried)+len(payload)) when it frames: the payload is copied once.
func Frame(carried, payload []byte) []byte {
	if len(carried) > MaxCarried {
		panic("carrier: carried bytes longer than MaxCarried")
	}
	if len(carried) == 0 && (len(payload) == 0 || payload[0] != Marker) {
		return payload
	}
	b := make([]byte, 2+len(carried)+len(payload))
	b[0], b[1] = Marker, byte(len(carried))
	copy(b[2:], carried)
	copy(b[2+len(carried):], payload)
	return b
}

// Fits reports whether carried fits in a frame.
func Fits(carried []byte) bool { return len(carried) <= MaxCarried }

// Split returns the bytes that stored carries and its payload, the
// Codec's bytes, and whether stored is framed: it begins with Marker, its
// length byte is at most MaxCarried and no more than the bytes that
// follow, and a length 0 is followed by Marker (as Frame writes it).
// Otherwise it returns nil, stored and false. Both slices share
// stored's memory; Split allocates nothing and is O(1).
func Split(stored []byte) (carried, payload []byte, framed bool) {
	if len(stored) < 2 || stored[0] != Marker {
		return nil, stored, false
	}
	n := int(stored[1])
	if n > MaxCarried || 2+n > len(stored) {
		return nil, stored, false
	}
	if n == 0 {
		if len(stored) == 2 || stored[2] != Marker {
			return nil, stored, false
		}
		return nil, stored[2:], true
	}
	return stored[2 : 2+n : 2+n], stored[2+n:], true
}

// Strip returns stored's payload, the Codec's bytes, without the frame;
// stored itself when it is not framed. A tool that shows stored values
// calls it on each, whether or not the Runner carries: a Runner without
// Carry stores no frame, and the bytes of a text codec never begin with
// Marker.
func Strip(stored []byte) (payload []byte) {
	_, payload, _ = Split(stored)
	return payload
}
