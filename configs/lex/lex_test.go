package lex

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestScannerTokensAndLines(t *testing.T) {
	s := NewScanner(strings.NewReader("head a  b\r\n\n 2\tx\r\nlast"), "f")
	fields, line, ok := s.NextLine()
	if !ok || line != 1 || strings.Join(fields, "|") != "head|a|b" {
		t.Fatalf("NextLine = %v %d %v", fields, line, ok)
	}
	var got []string
	for {
		tok, ok := s.Next()
		if !ok {
			break
		}
		got = append(got, fmt.Sprintf("%s@%d", tok.Text, tok.Line))
	}
	if want := "2@3 x@3 last@4"; strings.Join(got, " ") != want {
		t.Errorf("tokens %v, want %s", got, want)
	}
	if s.Line() != 4 {
		t.Errorf("Line() at the end = %d, want 4", s.Line())
	}
}

func TestRestOfLine(t *testing.T) {
	s := NewScanner(strings.NewReader("KEY 1 2 3\nNEXT 4\n"), "f")
	if tok, _ := s.Next(); tok.Text != "KEY" {
		t.Fatal(tok)
	}
	if rest := s.RestOfLine(); strings.Join(rest, " ") != "1 2 3" {
		t.Errorf("rest = %v", rest)
	}
	if tok, _ := s.Next(); tok.Text != "NEXT" || tok.Line != 2 {
		t.Errorf("next = %+v", tok)
	}
}

func TestErrorFormat(t *testing.T) {
	cases := []struct {
		e    *Error
		want string
	}{
		{Errorf("w.txt", 3, "fwd comm size", "%q is negative", "-5"), `w.txt:3: fwd comm size: "-5" is negative`},
		{Errorf("w.txt", 0, "", "empty"), "w.txt: empty"},
		{Errorf("w.txt", 1, "pp_comm:", "%d is not a valid byte count", -8), "w.txt:1: pp_comm: -8 is not a valid byte count"},
	}
	for _, c := range cases {
		if c.e.Error() != c.want {
			t.Errorf("%q, want %q", c.e.Error(), c.want)
		}
	}
	wrapped := fmt.Errorf("loading: %w", Errorf("a", 1, "b", "c"))
	if !IsInputError(wrapped) || IsInputError(errors.New("x")) {
		t.Error("IsInputError")
	}
}

// An InputError is an input error however deeply it is wrapped, keeps its message, and BadInput
// leaves nil alone.
func TestInputError(t *testing.T) {
	err := fmt.Errorf("run: %w", BadInputf("-n %d: expected %s", 0, "1 or more"))
	if !IsInputError(err) || err.Error() != "run: -n 0: expected 1 or more" {
		t.Errorf("%v: not an input error, or its message changed", err)
	}
	var ie InputError
	if !errors.As(err, &ie) || ie.Error() != "-n 0: expected 1 or more" {
		t.Errorf("errors.As: %v", ie)
	}
	if BadInput(nil) != nil {
		t.Error("BadInput(nil) is not nil")
	}
}

// FromYAML keeps the line the YAML decoder names, and falls back to line 1.
func TestFromYAML(t *testing.T) {
	tests := []struct {
		err  string
		want string
	}{
		{"yaml: line 7: mapping values are not allowed in this context", "jobs.yaml:7: mapping values are not allowed in this context"},
		{"yaml: control characters are not allowed", "jobs.yaml:1: control characters are not allowed"},
	}
	for _, tc := range tests {
		if got := FromYAML("jobs.yaml", errors.New(tc.err)).Error(); got != tc.want {
			t.Errorf("FromYAML(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
