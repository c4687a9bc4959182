package configs

import (
	"io"
	"math"
	"strconv"
	"strings"

	"simd/configs/lex"
)

// RatioMinColumns is the number of cells every data row of a ratio table must have: SimAI's
// getValue reads columns 0 to 9.
const RatioMinColumns = 10

// RatioTable is one of the analytical backend's efficiency tables (nic_ratio.csv,
// nvlink_ratio.csv, ata_ratio.csv).
//
// Rows are the data rows in file order; Rows[i][0] is a message size in bytes and the other
// cells are efficiency factors by node count (see the header). Rows may differ in length,
// exactly as SimAI reads them: an empty cell reads as 1, and a trailing empty field (a line
// ending in ',') is dropped.
type RatioTable struct {
	Name   string   // the file name given to ParseRatioCSV
	Header []string // the header line's fields, trimmed
	Rows   [][]float64
}

// ParseRatioCSV reads a ratio table. The header line is skipped (kept in Header); blank lines
// are ignored; each cell is trimmed of spaces and tabs, and an empty cell reads as 1, as in
// SimAI. Every cell must be a number (sizes and factors positive and finite), there must be at
// least 2 data rows, sizes must strictly increase, and every row must have at least
// RatioMinColumns cells. Errors are *lex.Error naming file, line and column.
func ParseRatioCSV(r io.Reader, file string) (RatioTable, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return RatioTable{}, lex.Errorf(file, 0, "", "reading failed: %v", err)
	}
	lines := strings.Split(string(data), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1] // the file ends with a line break
	}
	if len(lines) == 0 {
		return RatioTable{}, lex.Errorf(file, 0, "", "the file is empty (expected a header line and at least 2 data rows)")
	}
	t := RatioTable{Name: file}
	for _, h := range splitRatioLine(lines[0]) {
		t.Header = append(t.Header, strings.Trim(h, " \t"))
	}
	column := func(i int) string {
		if i < len(t.Header) && t.Header[i] != "" {
			return "column " + strconv.Itoa(i+1) + " (" + strconv.Quote(t.Header[i]) + ")"
		}
		return "column " + strconv.Itoa(i+1)
	}
	lastLine := 1
	for i, line := range lines[1:] {
		lineNo := i + 2
		if strings.TrimSpace(line) == "" {
			continue
		}
		cells := splitRatioLine(line)
		row := make([]float64, len(cells))
		for j, cell := range cells {
			cell = strings.Trim(cell, " \t")
			if cell == "" {
				row[j] = 1
				continue
			}
			v, ok := parseNumber(cell)
			if !ok {
				return RatioTable{}, lex.Errorf(file, lineNo, column(j), "expected a number, got %q", cell)
			}
			if !(v > 0) {
				return RatioTable{}, lex.Errorf(file, lineNo, column(j), "expected a positive number, got %q", cell)
			}
			row[j] = v
		}
		if len(row) < RatioMinColumns {
			return RatioTable{}, lex.Errorf(file, lineNo, "", "expected at least %d cells (SimAI reads the first %d columns), found %d",
				RatioMinColumns, RatioMinColumns, len(row))
		}
		if n := len(t.Rows); n > 0 && !(row[0] > t.Rows[n-1][0]) {
			return RatioTable{}, lex.Errorf(file, lineNo, column(0), "expected sizes in strictly increasing order, but %v follows %v (line %d)",
				row[0], t.Rows[n-1][0], lastLine)
		}
		t.Rows = append(t.Rows, row)
		lastLine = lineNo
	}
	if len(t.Rows) < 2 {
		return RatioTable{}, lex.Errorf(file, lastLine, "", "expected at least 2 data rows after the header, found %d", len(t.Rows))
	}
	return t, nil
}

// splitRatioLine splits a line on commas the way getline(ss, cell, ',') does: a final empty
// field (after a trailing comma) is not produced. A trailing '\r' (CRLF files) is removed.
func splitRatioLine(line string) []string {
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return nil
	}
	cells := strings.Split(line, ",")
	if cells[len(cells)-1] == "" {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// parseNumber reads a finite decimal number.
func parseNumber(s string) (float64, bool) {
	if !decimalRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}
