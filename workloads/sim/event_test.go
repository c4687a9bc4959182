package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simd/configs"
	"simd/netmodel"
)

// ringWorkload is one 64 MiB all-reduce over the TP group: 2(n−1) ring steps of n flows.
const ringWorkload = "MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 67108864 1\n"

// A cancelled context stops the run at the first look, with the context's cause as the reason,
// and the result holds the iteration up to there.
func TestEventStopsWithTheContextsCause(t *testing.T) {
	s := newTestSimulation(t, ringWorkload, 16, "CC_MODE 0\n")
	cause := errors.New("the user's reason")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	r, err := s.Event(ctx, EventOptions{SendLatency: -1}, Attachments{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Stopped != cause || r.Events != WatchEvents {
		t.Errorf("stopped by %v after %d events, want %v after %d", r.Stopped, r.Events, cause, WatchEvents)
	}
	if !strings.HasPrefix(r.Note, "stopped by the user's reason after 4096 events at ") || r.Report.Incomplete != r.Note {
		t.Errorf("note %q, report's %q", r.Note, r.Report.Incomplete)
	}
	if len(r.Finished()) != 0 || len(r.Collectives) != 1 {
		t.Errorf("%d collectives started, %d finished; want 1 and 0", len(r.Collectives), len(r.Finished()))
	}
}

// EventOptions.MaxEvents stops a run after exactly that many events; without it the same run
// completes, and a context never cancelled changes nothing.
func TestEventMaxEvents(t *testing.T) {
	s := newTestSimulation(t, ringWorkload, 16, "CC_MODE 0\n")
	full, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, Attachments{})
	if err != nil || full.Stopped != nil || len(full.Finished()) != 1 {
		t.Fatalf("full run: %v, stopped %v", err, full.Stopped)
	}
	for _, n := range []uint64{1, 1000, WatchEvents + 1} {
		r, err := s.Event(context.Background(), EventOptions{SendLatency: -1, MaxEvents: n}, Attachments{})
		if err != nil {
			t.Fatal(err)
		}
		var lim EventLimitError
		if !errors.As(r.Stopped, &lim) || lim.Events != n || r.Events != n {
			t.Errorf("-max-events %d: stopped by %v after %d events", n, r.Stopped, r.Events)
		}
		if r.End > full.End {
			t.Errorf("-max-events %d: reached %v, past the full run's %v", n, r.End, full.End)
		}
	}
}

// Watch sees the run every WatchEvents events: the plan steps and the flows' worth of work grow
// towards their totals, which are the plan's steps and the estimate's flows (2(n−1) steps of n
// flows for the 16-GPU ring of the TP group, two groups of 8).
func TestWatchSeesTheRun(t *testing.T) {
	s := newTestSimulation(t, ringWorkload, 16, "CC_MODE 0\n")
	var looks []Status
	r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, Attachments{Watch: func(st Status) { looks = append(looks, st) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := int(r.Events / WatchEvents); len(looks) != want {
		t.Fatalf("%d looks in %d events, want %d", len(looks), r.Events, want)
	}
	for i, st := range looks {
		if st.Events != uint64(i+1)*WatchEvents || !st.Started || st.Flows != int64(r.Sim.Flows()) || st.FlowsDone > float64(st.Flows) || st.Total < 1 {
			t.Errorf("look %d: %+v (run: %d flows)", i, st, r.Sim.Flows())
		}
		if i > 0 && (st.FlowsDone < looks[i-1].FlowsDone || st.Now < looks[i-1].Now || st.Done < looks[i-1].Done) {
			t.Errorf("look %d went back: %+v after %+v", i, st, looks[i-1])
		}
	}
}

// Files writes the streamed logs SimAI.conf switches on and commits them together; a run that
// fails leaves nothing behind, not even temporary files.
func TestFilesCommitAndAbort(t *testing.T) {
	conf := "CC_MODE 0\nFCT_OUTPUT_FILE fct.txt\nPFC_OUTPUT_FILE pfc.txt\n"
	s := newTestSimulation(t, ringWorkload, 16, conf)
	c, _, err := configs.ParseSimAIConf(strings.NewReader(conf), "SimAI.conf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fs := NewFiles(dir, "run-", false, &c, "SimAI.conf")
	r, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, fs.Attachments())
	if err != nil {
		t.Fatal(err)
	}
	paths, err := fs.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "run-fct.txt"), filepath.Join(dir, "run-pfc.txt")}; strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("committed %v, want %v", paths, want)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); uint64(lines) != r.Sim.Flows() {
		t.Errorf("fct.txt has %d lines for %d flows", lines, r.Sim.Flows())
	}
	fs.Abort() // after Commit: nothing to remove

	// A run refused by its memory guard opens nothing.
	dir2 := t.TempDir()
	fs2 := NewFiles(dir2, "", false, &c, "SimAI.conf")
	if _, err := s.Event(context.Background(), EventOptions{SendLatency: -1, MaxMemory: 1}, fs2.Attachments()); !IsInputError(err) {
		t.Fatalf("a 1-byte memory limit: %v", err)
	}
	fs2.Abort()
	// A run whose attachment fails after the files are open leaves nothing behind.
	att := fs2.Attachments()
	attach := att.Attach
	att.Attach = func(sim *netmodel.Simulator) error {
		if err := attach(sim); err != nil {
			return err
		}
		return errors.New("attachment failed")
	}
	if _, err := s.Event(context.Background(), EventOptions{SendLatency: -1}, att); err == nil {
		t.Fatal("the failing attachment went unnoticed")
	}
	fs2.Abort()
	if entries, _ := os.ReadDir(dir2); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
