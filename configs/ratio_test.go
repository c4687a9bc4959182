package configs

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"simd/configs/lex"
)

// rowFor returns the row of t whose size is size.
func rowFor(t RatioTable, size float64) ([]float64, bool) {
	for _, r := range t.Rows {
		if r[0] == size {
			return r, true
		}
	}
	return nil, false
}

func TestShippedRatioTables(t *testing.T) {
	nic, nvlink, ata, err := ShippedRatioTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []RatioTable{nic, nvlink, ata} {
		if len(tab.Rows) != 11 {
			t.Errorf("%s: %d rows, want 11", tab.Name, len(tab.Rows))
		}
		if len(tab.Header) != 13 || tab.Header[0] != "Size" || tab.Header[12] != "Multi (NIC)" {
			t.Errorf("%s: header %q", tab.Name, tab.Header)
		}
		if tab.Rows[0][0] != 16777216 || tab.Rows[10][0] != 17179869184 {
			t.Errorf("%s: sizes %v … %v", tab.Name, tab.Rows[0][0], tab.Rows[10][0])
		}
		// Rows 0-3 end in ',' (12 cells), rows 4-10 have a 13th value.
		for i, r := range tab.Rows {
			want := 13
			if i < 4 {
				want = 12
			}
			if len(r) != want {
				t.Errorf("%s row %d has %d cells, want %d", tab.Name, i, len(r), want)
			}
		}
	}
	if nic.Name != "nic_ratio.csv" || nvlink.Name != "nvlink_ratio.csv" || ata.Name != "ata_ratio.csv" {
		t.Errorf("names %q %q %q", nic.Name, nvlink.Name, ata.Name)
	}

	if _, ok := rowFor(nvlink, 3221225472); ok {
		t.Error("nvlink has a row for 3221225472")
	}
	checks := []struct {
		name string
		tab  RatioTable
		size float64
		col  int
		want float64
	}{
		{"nvlink 2 GiB col 1", nvlink, 2147483648, 1, 0.78},
		{"nvlink 4 GiB col 1", nvlink, 4294967296, 1, 0.79},
		{"nic 16 MiB col 6 (written)", nic, 16777216, 6, 0.044},
		{"nic 16 MiB col 8", nic, 16777216, 8, 0.0087},
		{"nic 1 GiB col 8", nic, 1073741824, 8, 0.314575},
		{"nvlink 16 MiB col 6 (empty cell)", nvlink, 16777216, 6, 1},
		{"ata 16 MiB col 6 (empty cell)", ata, 16777216, 6, 1},
		{"ata 16 GiB col 8 (empty cell)", ata, 17179869184, 8, 1},
		{"ata 16 MiB col 9", ata, 16777216, 9, 0.86},
		{"ata 16 MiB col 11", ata, 16777216, 11, 0.77},
		{"ata 256 MiB col 12", ata, 268435456, 12, 0.9},
		{"nvlink 16 GiB col 5", nvlink, 17179869184, 5, 0.88},
	}
	for _, c := range checks {
		r, ok := rowFor(c.tab, c.size)
		if !ok || c.col >= len(r) || r[c.col] != c.want {
			t.Errorf("%s: row %v, want %v", c.name, r, c.want)
		}
	}
	if len(ata.Rows[0]) > 12 {
		t.Errorf("ata row 0 has a column 12: %v", ata.Rows[0])
	}

	for _, name := range []string{"nic_ratio.csv", "nvlink_ratio.csv", "ata_ratio.csv"} {
		if text, ok := ShippedRatioText(name); !ok || !bytes.HasPrefix(text, []byte("Size,1 Node(NVLinkx),")) {
			t.Errorf("ShippedRatioText(%q) = %.20q, %v", name, text, ok)
		}
	}
	for _, name := range []string{"", ".", "ratio/nic_ratio.csv", "../SimAI.conf", "x.csv"} {
		if _, ok := ShippedRatioText(name); ok {
			t.Errorf("ShippedRatioText(%q) found something", name)
		}
	}
}

const ratioHeader = "Size,a,b,c,d,e,f,g,h,i,j,k,l\n"

func TestParseRatioCSV(t *testing.T) {
	cases := []struct {
		name, text string
		rows       [][]float64
	}{
		{"plain", ratioHeader + "1,2,3,4,5,6,7,8,9,10\n2,2,3,4,5,6,7,8,9,10\n",
			[][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
		{"empty cells read as 1, trailing empty dropped, spaces trimmed", ratioHeader + "1, 0.5 ,,,,,,,, 0.25,\n2,,,,,,,,,,,,\n",
			[][]float64{{1, 0.5, 1, 1, 1, 1, 1, 1, 1, 0.25}, {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}},
		{"only the last empty field is dropped", ratioHeader + "1,2,3,4,5,6,7,8,9,,\n2,2,3,4,5,6,7,8,9,10\n",
			[][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 1}, {2, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
		{"CRLF and blank lines", "h\r\n1,2,3,4,5,6,7,8,9,10,\r\n\r\n2e3,2,3,4,5,6,7,8,9,10\r\n",
			[][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2000, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
		{"no final line break", ratioHeader + "1,2,3,4,5,6,7,8,9,10\n2,2,3,4,5,6,7,8,9,10",
			[][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := ParseRatioCSV(strings.NewReader(tc.text), "r.csv")
			if err != nil {
				t.Fatal(err)
			}
			if tab.Name != "r.csv" || len(tab.Rows) != len(tc.rows) {
				t.Fatalf("got %+v", tab)
			}
			for i := range tc.rows {
				if len(tab.Rows[i]) != len(tc.rows[i]) {
					t.Fatalf("row %d = %v, want %v", i, tab.Rows[i], tc.rows[i])
				}
				for j := range tc.rows[i] {
					if tab.Rows[i][j] != tc.rows[i][j] {
						t.Errorf("row %d = %v, want %v", i, tab.Rows[i], tc.rows[i])
						break
					}
				}
			}
		})
	}
}

func TestParseRatioCSVErrors(t *testing.T) {
	good := "1,2,3,4,5,6,7,8,9,10\n"
	cases := []struct {
		name, text string
		line       int
		field, msg string
	}{
		{"empty file", "", 0, "", "the file is empty"},
		{"header only", ratioHeader, 1, "", "expected at least 2 data rows after the header, found 0"},
		{"one data row", ratioHeader + good + "\n\n", 2, "", "found 1"},
		{"not a number", ratioHeader + good + "2,2,3,x,5,6,7,8,9,10\n", 3, `column 4 ("c")`, `expected a number, got "x"`},
		{"column past the header", "Size,a\n" + good + "2,2,3,4,5,6,7,8,9,10,zz\n", 3, "column 11", `got "zz"`},
		{"size not a number", ratioHeader + "16MiB,2,3,4,5,6,7,8,9,10\n", 2, `column 1 ("Size")`, "expected a number"},
		{"NaN", ratioHeader + good + "2,NaN,3,4,5,6,7,8,9,10\n", 3, `column 2 ("a")`, "expected a number"},
		{"overflow", ratioHeader + good + "2,1e999,3,4,5,6,7,8,9,10\n", 3, `column 2 ("a")`, "expected a number"},
		{"negative", ratioHeader + good + "2,-0.5,3,4,5,6,7,8,9,10\n", 3, `column 2 ("a")`, "expected a positive number"},
		{"zero", ratioHeader + good + "2,0,3,4,5,6,7,8,9,10\n", 3, `column 2 ("a")`, "expected a positive number"},
		{"short row", ratioHeader + good + "2,2,3,4,5,6,7,8,9\n", 3, "", "expected at least 10 cells"},
		{"short row by a trailing comma", ratioHeader + good + "2,2,3,4,5,6,7,8,9,\n", 3, "", "found 9"},
		{"sizes equal", ratioHeader + good + good, 3, `column 1 ("Size")`, "strictly increasing order, but 1 follows 1 (line 2)"},
		{"sizes decreasing", ratioHeader + "5,2,3,4,5,6,7,8,9,10\n\n" + good, 4, `column 1 ("Size")`, "but 1 follows 5 (line 2)"},
		{"semicolons", ratioHeader + "1;2;3;4;5;6;7;8;9;10\n", 2, `column 1 ("Size")`, "expected a number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRatioCSV(strings.NewReader(tc.text), "r.csv")
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *lex.Error", err)
			}
			if le.File != "r.csv" || le.Line != tc.line || le.Field != tc.field || !strings.Contains(le.Msg, tc.msg) {
				t.Errorf("err = %q (line %d, field %q)\nwant line %d, field %q, containing %q", err, le.Line, le.Field, tc.line, tc.field, tc.msg)
			}
		})
	}
}

// FuzzParseRatioCSV: seeded with SimAI's three shipped ratio tables; never panics; an error is a *lex.Error naming
// the file and a line of it; what is accepted holds values in range.
//
//	go test -run '^$' -fuzz FuzzParseRatioCSV -fuzztime 60s ./configs
func FuzzParseRatioCSV(f *testing.F) {
	for _, name := range []string{"nic_ratio.csv", "nvlink_ratio.csv", "ata_ratio.csv"} {
		text, _ := ShippedRatioText(name)
		f.Add(text)
	}
	f.Add([]byte(ratioHeader + "1,2,3,4,5,6,7,8,9,10\n2,,,,,,,,,,\n"))
	f.Add([]byte("h\r\n1,2,3,4,5,6,7,8,9,10,\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ParseRatioCSV(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			var le *lex.Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v is %T, not *lex.Error", err, err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; le.File != "fuzz.csv" || le.Line < 0 || le.Line > lines {
				t.Fatalf("error %q does not name the file and a line of its %d", err, lines)
			}
			return
		}
		if len(tab.Rows) < 2 {
			t.Fatalf("%d rows accepted", len(tab.Rows))
		}
		for i, r := range tab.Rows {
			if len(r) < RatioMinColumns {
				t.Fatalf("row %d has %d cells", i, len(r))
			}
			if i > 0 && !(r[0] > tab.Rows[i-1][0]) {
				t.Fatalf("sizes not increasing at row %d", i)
			}
			for _, v := range r {
				if !(v > 0) {
					t.Fatalf("non-positive cell %v accepted", v)
				}
			}
		}
	})
}
