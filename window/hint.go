package window

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The hints below turn a rejected piece of a schedule into the form Parse
// reads, when one reading is obvious. They run only on the error path, so
// they may be slow; each returns "" when it has no suggestion.

// clockHint returns v written as a valid HH:MM start or end (which), when v
// is a time in another common form: "9:00", "9", "0900", "9.30", "9h30",
// "5pm", "9:30am".
func clockHint(which, v string) string {
	s := strings.ToLower(v)
	am, pm := strings.HasSuffix(s, "am"), strings.HasSuffix(s, "pm")
	if am || pm {
		s = s[:len(s)-2]
	}
	hs, ms := s, "00"
	if i := strings.IndexAny(s, ":.h"); i >= 0 {
		hs, ms = s[:i], s[i+1:]
	} else if len(s) == 3 || len(s) == 4 {
		hs, ms = s[:len(s)-2], s[len(s)-2:]
	}
	if len(hs) < 1 || len(hs) > 2 || len(ms) != 2 || !digits(hs) || !digits(ms) {
		return ""
	}
	h, _ := strconv.Atoi(hs)
	m, _ := strconv.Atoi(ms)
	if am || pm {
		if h < 1 || h > 12 {
			return ""
		}
		h %= 12
		if pm {
			h += 12
		}
	}
	hint := fmt.Sprintf("%02d:%02d", h, m)
	if _, err := parseClock(which, hint); err != nil || hint == v {
		return ""
	}
	return hint
}

func digits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// timesHint returns the HH:MM-HH:MM that the times at the head of fields
// stand for, when they are written another way: "9-17", "9am-5pm",
// "09:00–17:00" (en dash), "09:00 - 17:00".
func timesHint(fields []string) string {
	v := fields[0]
	switch {
	case len(fields) > 2 && fields[1] == "-":
		v += "-" + fields[2]
	case len(fields) > 1 && (strings.HasSuffix(v, "-") || strings.HasPrefix(fields[1], "-")):
		v += fields[1]
	}
	v = strings.NewReplacer("–", "-", "—", "-").Replace(v)
	start, end, ok := strings.Cut(v, "-")
	if !ok {
		return ""
	}
	fix := func(which, v string) string {
		if _, err := parseClock(which, v); err == nil {
			return v
		}
		return clockHint(which, v)
	}
	start, end = fix("start", start), fix("end", end)
	if start == "" || end == "" || start+"-"+end == fields[0] {
		return ""
	}
	return start + "-" + end
}

// dayHint returns the three-letter name of the day that name stands for:
// "Tues" and "Tuesdays" are "Tue", "Th" is "Thu".
func dayHint(name string) string {
	for d := time.Sunday; d <= time.Saturday; d++ {
		full := d.String()
		if len(name) >= 3 && strings.EqualFold(name[:3], dayNames[d]) ||
			len(name) == 2 && strings.EqualFold(name, full[:2]) {
			return dayNames[d]
		}
	}
	return ""
}

// abbreviations maps common time zone abbreviations, which are not zone
// names, to a zone that uses them. tzdata keeps a few (EST, MST, HST, CET,
// EET, WET, MET) as legacy zones, which Parse accepts as written; they are
// here so that a wrong case ("est") is not steered to them.
var abbreviations = map[string]string{
	"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
	"MST": "America/Denver", "MDT": "America/Denver",
	"CST": "America/Chicago", "CDT": "America/Chicago",
	"EST": "America/New_York", "EDT": "America/New_York",
	"AKST": "America/Anchorage", "AKDT": "America/Anchorage",
	"HST": "Pacific/Honolulu",
	"BST": "Europe/London", "WET": "Europe/Lisbon",
	"CET": "Europe/Paris", "CEST": "Europe/Paris", "MET": "Europe/Paris",
	"EET": "Europe/Athens", "EEST": "Europe/Athens",
	"MSK": "Europe/Moscow", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "KST": "Asia/Seoul",
	"AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
	"NZST": "Pacific/Auckland", "NZDT": "Pacific/Auckland",
}

// zoneHint returns what to tell the user about a zone name that
// time.LoadLocation does not know, starting with "; " or ": ".
func zoneHint(name string) string {
	if z, ok := abbreviations[strings.ToUpper(name)]; ok {
		return fmt.Sprintf(": an abbreviation, not a zone name; did you mean %q?", z)
	}
	if z := zoneFold(name); z != "" {
		return fmt.Sprintf("; did you mean %q?", z)
	}
	if z := etcZone(name); z == "UTC" {
		return `; did you mean "UTC"?`
	} else if z != "" {
		return fmt.Sprintf("; did you mean %q (Etc/ signs are inverted)?", z)
	}
	return ""
}

// zoneDirs are the directories time.LoadLocation reads zoneinfo files from
// on Unix, after $ZONEINFO.
var zoneDirs = []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo"}

// zoneFold returns the zone name that equals name but for case, e.g.
// "Europe/Paris" for "europe/paris". It looks up each element of name in
// the zoneinfo directories, then, where there are none (Windows, embedded
// tzdata), tries the usual capitalisation.
func zoneFold(name string) string {
	dirs := zoneDirs
	if env := os.Getenv("ZONEINFO"); env != "" {
		dirs = append([]string{env}, dirs...)
	}
	for _, dir := range dirs {
		if z := foldPath(dir, name); z != "" && z != name {
			if _, err := time.LoadLocation(z); err == nil {
				return z
			}
		}
	}
	for _, z := range []string{strings.ToUpper(name), capitalize(name)} {
		if _, err := time.LoadLocation(z); err == nil && z != name {
			return z
		}
	}
	return ""
}

// foldPath returns the path under dir of the file whose name matches name
// but for case, relative to dir with slashes, or "".
func foldPath(dir, name string) string {
	var found []string
	for _, elem := range strings.Split(name, "/") {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.Join(found...)))
		if err != nil {
			return ""
		}
		match := ""
		for _, e := range entries {
			if strings.EqualFold(e.Name(), elem) {
				match = e.Name()
				break
			}
		}
		if match == "" {
			return ""
		}
		found = append(found, match)
	}
	return strings.Join(found, "/")
}

// capitalize upper-cases the first letter of each word of a zone name and
// lower-cases the rest: "america/new_york" becomes "America/New_York".
func capitalize(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (i == 0 || strings.IndexByte("/_-", b[i-1]) >= 0) && 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// etcZone returns the Etc/ zone of a fixed offset written as "UTC+2",
// "GMT-05" or "UTC+02:00", or "". Etc/ names follow POSIX, where positive
// means west of Greenwich, so UTC+2 is "Etc/GMT-2".
func etcZone(name string) string {
	u := strings.ToUpper(name)
	if !strings.HasPrefix(u, "UTC") && !strings.HasPrefix(u, "GMT") || len(u) < 5 {
		return ""
	}
	sign, hours := u[3], strings.TrimSuffix(u[4:], ":00")
	if sign != '+' && sign != '-' || len(hours) > 2 || !digits(hours) {
		return ""
	}
	h, _ := strconv.Atoi(hours)
	if h == 0 {
		return "UTC"
	}
	west := "-"
	if sign == '-' {
		west = "+"
	}
	z := "Etc/GMT" + west + strconv.Itoa(h)
	if _, err := time.LoadLocation(z); err != nil {
		return ""
	}
	return z
}
