// Package browsertest drives the console (package
// github.com/pacerkit/pacer/console) in headless Chromium: it loads each
// page, filters a queue's keys, opens a key, pauses and resumes a queue,
// redrives a dead letter, and checks what the pages then show.
//
// It is a module of its own so that the core module does not depend on
// the browser driver. The tests need Chromium: PACER_CHROMIUM names the
// binary, or else chromium (Debian's package) or google-chrome on the
// PATH. Without one they skip, but under CI (CI=true) they fail. Each
// test saves screenshots of the pages it visits to PACER_SCREENSHOTS, or
// to the test's temporary directory.
package browsertest
