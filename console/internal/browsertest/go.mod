module github.com/pacerkit/pacer/console/internal/browsertest

go 1.26.0

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/chromedp/chromedp v0.23.0
	github.com/pacerkit/pacer v0.0.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/time v0.15.0 // indirect
)

