package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/jsonfield"
)

// The JSON of the types an operator reads (see the package doc, JSON):
// struct tags name the fields; the methods below only show the times in
// UTC, in place of the embedded time.Time fields of the same name, which
// encoding/json leaves behind as deeper fields. A type converted to its
// twin (QueueInfo to queueInfoFields) keeps its fields and tags but not
// these methods, which would otherwise call themselves.
type (
	queueInfoFields   QueueInfo
	keyInfoFields     KeyInfo
	storedValueFields StoredValue
	deadLetterFields  DeadLetter

	queueInfoJSON struct {
		*queueInfoFields
		Oldest jsonfield.Time `json:"oldest,omitzero"`
	}
	keyInfoJSON struct {
		*keyInfoFields
		Since  jsonfield.Time `json:"since,omitzero"`
		Until  jsonfield.Time `json:"until,omitzero"`
		Oldest jsonfield.Time `json:"oldest,omitzero"`
	}
	storedValueJSON struct {
		*storedValueFields
		Added jsonfield.Time `json:"added,omitzero"`
	}
	deadLetterJSON struct {
		*deadLetterFields
		At jsonfield.Time `json:"at,omitzero"`
	}
)

// MarshalJSON writes q with its tags' names, Oldest in UTC and left out
// when zero.
func (q QueueInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(queueInfoJSON{(*queueInfoFields)(&q), jsonfield.Time(q.Oldest)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (q *QueueInfo) UnmarshalJSON(b []byte) error {
	j := queueInfoJSON{(*queueInfoFields)(q), jsonfield.Time(q.Oldest)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	q.Oldest = time.Time(j.Oldest)
	return nil
}

// MarshalJSON writes k with its tags' names, its state by name and its
// times in UTC, each left out when zero.
func (k KeyInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(keyInfoJSON{(*keyInfoFields)(&k), jsonfield.Time(k.Since), jsonfield.Time(k.Until), jsonfield.Time(k.Oldest)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (k *KeyInfo) UnmarshalJSON(b []byte) error {
	j := keyInfoJSON{(*keyInfoFields)(k), jsonfield.Time(k.Since), jsonfield.Time(k.Until), jsonfield.Time(k.Oldest)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	k.Since, k.Until, k.Oldest = time.Time(j.Since), time.Time(j.Until), time.Time(j.Oldest)
	return nil
}

// MarshalJSON writes v with its tags' names: the value in base64, as
// encoding/json writes bytes, and Added in UTC, left out when zero.
func (v StoredValue) MarshalJSON() ([]byte, error) {
	return json.Marshal(storedValueJSON{(*storedValueFields)(&v), jsonfield.Time(v.Added)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *StoredValue) UnmarshalJSON(b []byte) error {
	j := storedValueJSON{(*storedValueFields)(v), jsonfield.Time(v.Added)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	v.Added = time.Time(j.Added)
	return nil
}

// MarshalJSON writes d with its tags' names: the values in base64, as
// encoding/json writes bytes, and At in UTC, left out when zero.
func (d DeadLetter) MarshalJSON() ([]byte, error) {
	return json.Marshal(deadLetterJSON{(*deadLetterFields)(&d), jsonfield.Time(d.At)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *DeadLetter) UnmarshalJSON(b []byte) error {
	j := deadLetterJSON{(*deadLetterFields)(d), jsonfield.Time(d.At)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	d.At = time.Time(j.At)
	return nil
}

// MarshalText returns the state's name, as String does; the zero KeyState
// (no state, as KeyQuery.State uses it) is "". It fails for a value that
// is not one of the states. With UnmarshalText it makes a KeyState a JSON
// string and a flag (flag.TextVar).
func (s KeyState) MarshalText() ([]byte, error) {
	if s == 0 {
		return []byte{}, nil
	}
	if s > Scheduled {
		return nil, fmt.Errorf("store: KeyState(%d) is not a state", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a state's name, as MarshalText writes it: "held"
// is Held, "" the zero KeyState.
func (s *KeyState) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = 0
		return nil
	}
	for st := Debouncing; st <= Scheduled; st++ {
		if st.String() == string(b) {
			*s = st
			return nil
		}
	}
	return fmt.Errorf("store: %q is not a key state (debouncing, ready, leased, retrying, held, deferred or scheduled)", b)
}
