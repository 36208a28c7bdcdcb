package ratelimit

import (
	"encoding/json"
	"math"
	"time"

	"github.com/pacerkit/pacer/internal/jsonfield"
)

// statsFields has the fields and tags of Stats but not its JSON methods.
type statsFields Stats

// statsJSON is the JSON of Stats: its fields of the same names replace
// the embedded ones, which encoding/json leaves behind as deeper.
type statsJSON struct {
	*statsFields
	Rate        jsonRate          `json:"rate"`
	WaitTime    jsonfield.Seconds `json:"wait_time_seconds"`
	PausedUntil jsonfield.Time    `json:"paused_until,omitzero"`
}

// MarshalJSON writes s as the Stats doc shows.
func (s Stats) MarshalJSON() ([]byte, error) {
	return json.Marshal(statsJSON{(*statsFields)(&s), jsonRate(s.Rate), jsonfield.Seconds(s.WaitTime), jsonfield.Time(s.PausedUntil)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Stats) UnmarshalJSON(b []byte) error {
	j := statsJSON{(*statsFields)(s), jsonRate(s.Rate), jsonfield.Seconds(s.WaitTime), jsonfield.Time(s.PausedUntil)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	s.Rate, s.WaitTime, s.PausedUntil = float64(j.Rate), time.Duration(j.WaitTime), time.Time(j.PausedUntil)
	return nil
}

// jsonRate is a rate in JSON: a number, or null for the unlimited rate,
// math.Inf(1), which a JSON number cannot hold.
type jsonRate float64

func (r jsonRate) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 1) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(r))
}

func (r *jsonRate) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = jsonRate(math.Inf(1))
		return nil
	}
	return json.Unmarshal(b, (*float64)(r))
}
