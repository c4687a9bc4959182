module simd

go 1.26

require (
	github.com/emirpasic/gods v1.18.1
	github.com/emirpasic/gods/v2 v2.0.0-alpha
	github.com/twmb/murmur3 v1.2.2
	go.uber.org/zap v1.28.0
	gonum.org/v1/gonum v0.17.0
)

require google.golang.org/protobuf v1.36.12 // indirect

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	gonum.org/v1/plot v0.17.0
	gopkg.in/yaml.v3 v3.0.1
)
