package sim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"simd/configs"
	"simd/engine"
	"simd/netmodel"
	"simd/netmodel/ccfluid"
)

// Files are the files of an event run, written by observers attached to it (Attachments) and
// committed together once it is over: fct.txt, pfc.txt and the monitors while it runs, then the
// reports (Write). Every file is written under a temporary name and renamed into place on
// Commit, so a run that fails or is killed never leaves a file that claims to be complete.
//
// Where they go: with confPaths false every file goes into Dir under Prefix + its standard name,
// and SimAI.conf's *_OUTPUT_FILE and *_MON_FILE keys only switch outputs on or off; with
// confPaths true the paths SimAI.conf gives are used as they are, and the rest goes to Dir.
type Files struct {
	dir, prefix string
	confPaths   bool
	conf        *configs.SimAIConf
	confPath    string
	paths       map[string]string // key → path as given
	on          map[string]bool   // the streamed files written, by SimAI.conf key
	// Concurrent formats and writes the FCT log on a second core (netmodel.FCTLog.Concurrent).
	Concurrent bool
	// Log receives the warning that monitors have nothing to sample without congestion control.
	Log *zap.Logger
	// Links samples what every directed link sends over the whole run (netmodel.LinkSampler,
	// in both network models) and writes links.csv and link_classes.csv on Commit. It reads
	// the run without changing it.
	Links bool

	pfc, fct *streamFile
	pfcLog   *netmodel.PFCLog
	fctLog   *netmodel.FCTLog
	mons     monitors
	links    *netmodel.LinkSampler
}

// streamedKeys are SimAI.conf's keys of the files written while a run goes on.
var streamedKeys = []string{"FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_MON_FILE", "BW_MON_FILE", "RATE_MON_FILE", "CNP_MON_FILE"}

// NewFiles places a run's files (see Files) for SimAI.conf conf, read from confPath.
func NewFiles(dir, prefix string, confPaths bool, conf *configs.SimAIConf, confPath string) *Files {
	on := map[string]bool{}
	for _, k := range streamedKeys {
		on[k] = conf.Present[k]
	}
	return &Files{dir: dir, prefix: prefix, confPaths: confPaths, conf: conf, confPath: confPath, Log: zap.NewNop(), on: on,
		paths: map[string]string{
			"FCT_OUTPUT_FILE": conf.FCTOutputFile, "PFC_OUTPUT_FILE": conf.PFCOutputFile,
			"QLEN_MON_FILE": conf.QlenMonFile, "BW_MON_FILE": conf.BWMonFile, "RATE_MON_FILE": conf.RateMonFile, "CNP_MON_FILE": conf.CNPMonFile,
		}}
}

// NewFCTFiles places a run's fct.txt alone in dir, whatever SimAI.conf's output keys say (simd
// moe run -o).
func NewFCTFiles(dir string, conf *configs.SimAIConf, confPath string) *Files {
	fs := NewFiles(dir, "", false, conf, confPath)
	for _, key := range streamedKeys {
		fs.Enable(key, key == "FCT_OUTPUT_FILE")
	}
	return fs
}

// Enable switches the streamed file of SimAI.conf's key (FCT_OUTPUT_FILE, PFC_OUTPUT_FILE,
// QLEN_MON_FILE, BW_MON_FILE, RATE_MON_FILE, CNP_MON_FILE) on or off, whatever SimAI.conf says.
func (fs *Files) Enable(key string, on bool) { fs.on[key] = on }

// Dir is the folder of the reports; Prefix the prefix of their names.
func (fs *Files) Dir() string    { return fs.dir }
func (fs *Files) Prefix() string { return fs.prefix }

// Check refuses, before anything is simulated, a SimAI.conf output path whose folder does not
// exist.
func (fs *Files) Check() error {
	if !fs.confPaths {
		return nil
	}
	for _, key := range streamedKeys {
		if !fs.on[key] {
			continue
		}
		dir := filepath.Dir(fs.paths[key])
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return BadInputf("SimAI.conf %s %s: the folder %s does not exist (create it, or give -o DIR to write every output there)", key, fs.paths[key], dir)
		}
	}
	return nil
}

// path is where an output goes.
func (fs *Files) path(key, std string) string {
	if fs.confPaths && key != "" {
		return fs.paths[key]
	}
	return filepath.Join(fs.dir, fs.prefix+std)
}

// Write writes a whole report (summary.json, EndToEnd.csv) under its standard name and returns
// its path.
func (fs *Files) Write(std string, data []byte) (string, error) {
	return fs.WriteWith(std, bytesOf(data))
}

// Attachments are the attachments that write the run's streamed files: on Open pfc.txt, if
// SimAI.conf asks for it, and on Attach the FCT log and the monitors.
func (fs *Files) Attachments() Attachments {
	return Attachments{Open: fs.openPFC, Attach: fs.attach, Ended: fs.ended}
}

// ended stops the link sampler at the end of the workload's run: links.csv and
// link_classes.csv cover the run, not the monitors' sampling after it.
func (fs *Files) ended() {
	if fs.links != nil {
		fs.links.Finish()
	}
}

// openPFC opens pfc.txt, if it is on, and returns its log.
func (fs *Files) openPFC() (ccfluid.PFCObserver, error) {
	pfc, err := fs.open("PFC_OUTPUT_FILE", "pfc.txt")
	if err != nil || pfc == nil {
		return nil, err
	}
	fs.pfc, fs.pfcLog = pfc, netmodel.NewPFCLog(pfc.f)
	return fs.pfcLog, nil
}

// attach hangs the FCT log and the monitors on sim.
func (fs *Files) attach(sim *netmodel.Simulator) error {
	fct, err := fs.open("FCT_OUTPUT_FILE", "fct.txt")
	if err != nil {
		return err
	}
	if fct != nil {
		fs.fct = fct
		fs.fctLog = netmodel.NewFCTLog(fct.f, sim.Fabric(), fs.conf.PacketPayloadSize)
		if fs.Concurrent {
			fs.fctLog.Concurrent()
		}
		sim.Observe(fs.fctLog)
	}
	if fs.Links {
		if fs.links, err = sim.SampleLinks(netmodel.LinkSamplerOptions{}); err != nil {
			return err
		}
	}
	return fs.startMonitors(sim)
}

// Commit finishes the streamed files (fct.txt, pfc.txt, the monitors, in that order) and moves
// them into place, then writes links.csv and link_classes.csv when Links is on (the run's end
// is the scheduler's time); it returns their paths.
func (fs *Files) Commit() ([]string, error) {
	var paths []string
	if fs.fct != nil {
		if err := fs.fctLog.Flush(); err != nil {
			return nil, err
		}
		p, err := fs.fct.commit()
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	if fs.pfc != nil {
		if err := fs.pfcLog.Flush(); err != nil {
			return nil, fmt.Errorf("writing %s: %w", fs.pfc.path, err)
		}
		p, err := fs.pfc.commit()
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	mp, err := fs.mons.commit()
	if err != nil {
		return nil, err
	}
	paths = append(paths, mp...)
	if fs.links != nil {
		ls := fs.links
		fs.links = nil
		ls.Finish()
		for _, out := range []struct {
			std   string
			write func(io.Writer) error
		}{{"links.csv", ls.WriteLinksCSV}, {"link_classes.csv", ls.WriteClassesCSV}} {
			p, err := fs.WriteWith(out.std, out.write)
			if err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// Abort removes the streamed files not committed; it is safe after Commit.
func (fs *Files) Abort() {
	if fs.fctLog != nil {
		fs.fctLog.Stop()
	}
	fs.fct.abort()
	fs.pfc.abort()
	fs.mons.abort()
}

// streamFile is an output written while the simulation runs, under a temporary name until
// commit.
type streamFile struct {
	f    *os.File
	path string
}

// open starts a streamed output if its SimAI.conf key switches it on; nil if it is off.
func (fs *Files) open(key, std string) (*streamFile, error) {
	if !fs.on[key] {
		return nil, nil
	}
	p := fs.path(key, std)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("creating the folder of %s: %w", p, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", p, err)
	}
	return &streamFile{f: f, path: p}, nil
}

func (sf *streamFile) commit() (string, error) {
	name := sf.f.Name()
	if err := sf.f.Chmod(0o644); err != nil {
		return "", err
	}
	if err := sf.f.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", sf.path, err)
	}
	sf.f = nil
	if err := os.Rename(name, sf.path); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("writing %s: %w", sf.path, err)
	}
	return sf.path, nil
}

// abort removes an output that was not committed.
func (sf *streamFile) abort() {
	if sf == nil || sf.f == nil {
		return
	}
	sf.f.Close()
	os.Remove(sf.f.Name())
}

// monitorOutputs are SimAI.conf's monitor keys, the standard names of their files and the key
// of each one's sampling period, in the order of monitors.files.
var monitorOutputs = [...]struct{ key, std, interval string }{
	{"QLEN_MON_FILE", "qlen.txt", "QLEN_MON_INTERVAL"},
	{"BW_MON_FILE", "bw.txt", "BW_MON_INTERVAL"},
	{"RATE_MON_FILE", "rate.txt", "QP_MON_INTERVAL"},
	{"CNP_MON_FILE", "cnp.txt", "QP_MON_INTERVAL"},
}

// monitors are the monitor files of a run (netmodel/monitorlog.go), nil where off.
type monitors struct {
	files [len(monitorOutputs)]*streamFile
	logs  [len(monitorOutputs)]interface{ Flush() error }
}

// startMonitors opens the monitor files SimAI.conf switches on (QLEN_MON_FILE, BW_MON_FILE,
// RATE_MON_FILE, CNP_MON_FILE; qlen.txt, bw.txt, rate.txt, cnp.txt) and starts their samplers,
// between MON_START and MON_END. They sample the congestion-controlled model's queues and
// rates: when CC_MODE asks for no rate control there is nothing to sample, and a warning says
// so instead of writing files.
func (fs *Files) startMonitors(sim *netmodel.Simulator) error {
	conf := fs.conf
	var keys []string
	for _, m := range monitorOutputs {
		if fs.on[m.key] {
			keys = append(keys, m.key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if sim.CCNetwork() == nil {
		fs.Log.Warn("SimAI.conf asks for monitors, but its CC_MODE runs the ideal model, which has no queues or rates to sample: no monitor file is written (CC_MODE 1 has them)",
			zap.Strings("keys", keys))
		return nil
	}
	mon := netmodel.MonitorTimes(conf)
	periods := map[string]engine.Time{"QLEN_MON_INTERVAL": mon.QlenInterval, "BW_MON_INTERVAL": mon.BWInterval, "QP_MON_INTERVAL": mon.QPInterval}
	for _, m := range monitorOutputs {
		if fs.on[m.key] && periods[m.interval] <= 0 {
			return BadInputf("%s: %s 0: %s needs a positive period (µs)", confWhere(conf, fs.confPath, m.interval), m.interval, m.key)
		}
	}
	mons := &fs.mons
	for i, m := range monitorOutputs {
		f, err := fs.open(m.key, m.std)
		if err != nil {
			return err
		}
		if f == nil {
			continue
		}
		mons.files[i] = f
		switch m.key {
		case "QLEN_MON_FILE":
			l := netmodel.NewQlenLog(f.f)
			mon.Qlen, mons.logs[i] = l, l
		case "BW_MON_FILE":
			l := netmodel.NewBWLog(f.f)
			mon.BW, mons.logs[i] = l, l
		case "RATE_MON_FILE":
			l := netmodel.NewRateLog(f.f, sim)
			mon.Rate, mons.logs[i] = l, l
		case "CNP_MON_FILE":
			l := netmodel.NewCNPLog(f.f, sim)
			mon.CNP, mons.logs[i] = l, l
		}
	}
	return sim.Monitor(mon)
}

// commit finishes the monitor files and returns their paths.
func (m *monitors) commit() ([]string, error) {
	var paths []string
	for i, f := range m.files {
		if f == nil {
			continue
		}
		if err := m.logs[i].Flush(); err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.path, err)
		}
		p, err := f.commit()
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// abort removes the monitor files not committed.
func (m *monitors) abort() {
	for _, f := range m.files {
		f.abort()
	}
}
