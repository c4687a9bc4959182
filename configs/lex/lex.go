// Package lex reads the whitespace-separated text formats SimAI uses (workload, topology,
// SimAI.conf) and reports bad input the one way the whole project does: an *Error that names
// the file, the line and the field, and says what was expected. Bad input with no file and line
// (a flag's value, an option out of range) is an InputError.
//
// SimAI's C++ readers mix getline (for header lines) with operator>> (for everything else), so a
// Scanner offers both: NextLine returns the rest of the current line as fields, Next returns one
// token at a time across line breaks. '\r' counts as white space, so CRLF files read like LF files.
package lex

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Error is bad input: which file, which line (0 when unknown), which field, what was wrong.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	if !strings.HasSuffix(e.Field, ":") { // a header key such as "pp_comm:" brings its own colon
		b.WriteString(":")
	}
	b.WriteString(" ")
	b.WriteString(e.Msg)
	return b.String()
}

// Errorf builds an *Error with a formatted message.
func Errorf(file string, line int, field, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// yamlLine is how gopkg.in/yaml.v3 words a syntax error: "yaml: line N: what".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// FromYAML is a YAML decoder's error on file as an *Error: at the line the decoder names, else
// at line 1.
func FromYAML(file string, err error) *Error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: m[2]}
	}
	return &Error{File: file, Line: 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// InputError marks an error caused by a run's inputs or options (a workload the topology cannot
// hold, a SimAI.conf key out of range, an unknown algorithm, a flag's value), as opposed to one
// of the machine (a file that cannot be written); simd exits with status 2 for it. An *Error is
// one with a file and a line; an InputError wraps one that has none. It lives here, beside
// Error, so that every package reading what a user gave (topo, ccl/algo, the workloads) can say
// so without importing workloads/sim, which sits above them all.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// BadInput marks err as an input error; nil stays nil.
func BadInput(err error) error {
	if err == nil {
		return nil
	}
	return InputError{err}
}

// BadInputf is an input error with a formatted message.
func BadInputf(format string, args ...any) error { return InputError{fmt.Errorf(format, args...)} }

// IsInputError reports whether err (or anything it wraps) is an *Error or an InputError.
func IsInputError(err error) bool {
	var e *Error
	var ie InputError
	return errors.As(err, &e) || errors.As(err, &ie)
}

// Token is one whitespace-separated word and the 1-based line it was found on.
type Token struct {
	Text string
	Line int
}

// Scanner splits a reader into lines and tokens, counting lines.
type Scanner struct {
	r       *bufio.Reader
	file    string
	line    int      // number of lines read so far
	pending []string // fields of the current line not yet consumed by Next
	eof     bool
	err     error
}

// NewScanner reads r; file is the name used in errors.
func NewScanner(r io.Reader, file string) *Scanner {
	return &Scanner{r: bufio.NewReaderSize(r, 64<<10), file: file}
}

// File is the name given to NewScanner.
func (s *Scanner) File() string { return s.file }

// Line is the number of the line most recently read (the line of the last token returned, or
// the last line of the file after the end was reached).
func (s *Scanner) Line() int { return s.line }

// Err is the first read error other than the end of the input.
func (s *Scanner) Err() error { return s.err }

// readLine reads the next physical line; ok is false at the end of the input.
func (s *Scanner) readLine() (string, bool) {
	if s.eof {
		return "", false
	}
	text, err := s.r.ReadString('\n')
	if err != nil {
		s.eof = true
		if err != io.EOF {
			s.err = err
		}
		if text == "" {
			return "", false
		}
	}
	s.line++
	return text, true
}

// NextLine discards what is left of the current line and returns the fields of the next one
// (possibly none, for a blank line). ok is false at the end of the input.
func (s *Scanner) NextLine() (fields []string, line int, ok bool) {
	s.pending = nil
	text, ok := s.readLine()
	if !ok {
		return nil, s.line, false
	}
	return Fields(text), s.line, true
}

// Next returns the next token, reading further lines as needed. ok is false at the end.
func (s *Scanner) Next() (Token, bool) {
	for len(s.pending) == 0 {
		text, ok := s.readLine()
		if !ok {
			return Token{Line: s.line}, false
		}
		s.pending = Fields(text)
	}
	t := Token{Text: s.pending[0], Line: s.line}
	s.pending = s.pending[1:]
	return t, true
}

// RestOfLine returns and consumes the tokens left on the current line.
func (s *Scanner) RestOfLine() []string {
	rest := s.pending
	s.pending = nil
	return rest
}

// Fields splits a line on spaces, tabs, '\r', '\v' and '\f', as C++'s operator>> does.
func Fields(line string) []string {
	return strings.FieldsFunc(line, func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
		return false
	})
}
