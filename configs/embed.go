package configs

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"simd/configs/lex"
)

// The default files SimAI ships, byte for byte (provenance in the package comment).
var (
	//go:embed data/SimAI.conf
	shippedSimAIConf []byte

	//go:embed data/ratio/nic_ratio.csv data/ratio/nvlink_ratio.csv data/ratio/ata_ratio.csv
	shippedRatio embed.FS

	//go:embed examples/*.txt
	exampleWorkloads embed.FS
)

// Names used for the embedded files in messages.
const (
	shippedSimAIConfName = "SimAI.conf (built in)"
	shippedRatioDir      = "data/ratio"
)

// ShippedSimAIConfText returns a copy of SimAI's repository SimAI.conf
// (astra-sim-alibabacloud/inputs/config/SimAI.conf).
func ShippedSimAIConfText() []byte {
	return bytes.Clone(shippedSimAIConf)
}

// ShippedSimAIConf parses the embedded repository SimAI.conf. It has no warnings.
func ShippedSimAIConf() (SimAIConf, error) {
	c, _, err := ParseSimAIConf(bytes.NewReader(shippedSimAIConf), shippedSimAIConfName)
	return c, err
}

// ShippedRatioTables parses the embedded ratio tables of SimAI's repository
// (astra-sim-alibabacloud/inputs/ratio/{nic,nvlink,ata}_ratio.csv). Each table's Name is its
// file name, e.g. "nic_ratio.csv".
func ShippedRatioTables() (nic, nvlink, ata RatioTable, err error) {
	read := func(name string) (RatioTable, error) {
		data, err := shippedRatio.ReadFile(path.Join(shippedRatioDir, name))
		if err != nil {
			return RatioTable{}, err
		}
		return ParseRatioCSV(bytes.NewReader(data), name)
	}
	if nic, err = read("nic_ratio.csv"); err != nil {
		return
	}
	if nvlink, err = read("nvlink_ratio.csv"); err != nil {
		return
	}
	ata, err = read("ata_ratio.csv")
	return
}

// ShippedRatioText returns a copy of the embedded ratio CSV with the given file name
// ("nic_ratio.csv", "nvlink_ratio.csv" or "ata_ratio.csv").
func ShippedRatioText(name string) ([]byte, bool) {
	if name != path.Base(name) {
		return nil, false
	}
	data, err := shippedRatio.ReadFile(path.Join(shippedRatioDir, name))
	if err != nil {
		return nil, false
	}
	return bytes.Clone(data), true
}

// ExampleWorkload returns a copy of one of SimAI's example workload files (from its example/
// directory) by file name: "microAllReduce.txt" or "workload_analytical.txt".
func ExampleWorkload(name string) ([]byte, bool) {
	if name != path.Base(name) {
		return nil, false
	}
	data, err := exampleWorkloads.ReadFile(path.Join("examples", name))
	if err != nil {
		return nil, false
	}
	return bytes.Clone(data), true
}

// ExampleWorkloadNames lists the example workloads, sorted.
func ExampleWorkloadNames() []string {
	entries, err := fs.ReadDir(exampleWorkloads, "examples")
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names // fs.ReadDir sorts by name
}

// ReadSimAIConf reads the SimAI.conf at path, or the shipped one when path is "". A file that
// cannot be opened gives the *fs.PathError; one that does not parse, ParseSimAIConf's error.
func ReadSimAIConf(path string) (SimAIConf, []*lex.Error, error) {
	if path == "" {
		c, err := ShippedSimAIConf()
		return c, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return SimAIConf{}, nil, err
	}
	defer f.Close()
	return ParseSimAIConf(f, path)
}

// ExamplePrefix marks a shipped example workload where a workload file is expected:
// "example:microAllReduce.txt".
const ExamplePrefix = "example:"

// UnknownExampleError is the error for an "example:NAME" that names no shipped example.
type UnknownExampleError struct{ Name string }

func (e UnknownExampleError) Error() string {
	return fmt.Sprintf("%s%s: no such example (there are %s)", ExamplePrefix, e.Name, strings.Join(ExampleWorkloadNames(), ", "))
}

// ReadWorkloadText reads a workload's text: the file name, or with ExamplePrefix a shipped
// example. It returns the name to call the workload by (the file, or the example's name). A file
// that cannot be read gives the *fs.PathError, an unknown example an UnknownExampleError.
func ReadWorkloadText(name string) ([]byte, string, error) {
	if ex, ok := strings.CutPrefix(name, ExamplePrefix); ok {
		d, found := ExampleWorkload(ex)
		if !found {
			return nil, "", UnknownExampleError{ex}
		}
		return d, ex, nil
	}
	d, err := os.ReadFile(name)
	return d, name, err
}
