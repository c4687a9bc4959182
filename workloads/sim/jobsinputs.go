package sim

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"simd/configs"
	"simd/engine"
	"simd/workloads"
	"simd/workloads/jobs"
)

// JobsInputs are a jobs file (package workloads/jobs) to run on a cluster: every job's
// workload is read from its file (a relative path from the jobs file's folder, or a shipped
// example:NAME), placed on the cluster's GPUs and laid out there.
type JobsInputs struct {
	File    *jobs.File
	Cluster Cluster // the whole fabric: its GPU count is the GPUs the jobs are placed on
	Conf    configs.SimAIConf
	// ConfPath is SimAI.conf's file, for messages; "" for the shipped one.
	ConfPath string
	// Options are every job's (FileName is set per job, to the job's name).
	Options Options
	// ParseOptions are how the workloads are read.
	ParseOptions workloads.ParseOptions
}

// NewJobs places the jobs of in.File on the cluster and builds each one's Simulation. It is an
// input error, naming the jobs file's line and field, when placements overlap or leave the
// cluster, when a workload cannot be read, or when it was made for another GPU count than its
// placement gives it (its all_gpus) or does not fit it (TP, PP, EP must divide it).
func NewJobs(in JobsInputs) ([]Job, error) {
	f := in.File
	cl := in.Cluster
	placed, err := f.Place(cl.GPUs, cl.GPUsPerServer)
	if err != nil {
		return nil, BadInput(err)
	}
	out := make([]Job, len(f.Jobs))
	for i := range f.Jobs {
		j := &f.Jobs[i]
		where := func(field string) string {
			return fmt.Sprintf("%s:%d: jobs[%d].%s", f.Name, j.FieldLine(field), i, field)
		}
		path := j.Workload
		if !filepath.IsAbs(path) && !isExample(path) {
			path = filepath.Join(filepath.Dir(f.Name), path)
		}
		data, name, err := configs.ReadWorkloadText(path)
		if err != nil {
			return nil, BadInputf("%s: %v", where("workload"), err)
		}
		w, _, err := workloads.ParseWith(bytes.NewReader(data), name, in.ParseOptions)
		if err != nil {
			return nil, BadInputf("%s: %v", where("workload"), err)
		}
		gpus := placed[i]
		placement := "gpus"
		if j.GPUs == nil {
			placement = "count"
		}
		if a := w.Header.AllGPUs; a > 0 && a != len(gpus) {
			return nil, BadInputf("%s: the job has %d GPUs, but its workload %s was made for %d (all_gpus)", where(placement), len(gpus), name, a)
		}
		jcl := cl
		jcl.GPUs = len(gpus)
		opt := in.Options
		opt.Placement, opt.FileName = gpus, j.Name
		s, err := New(Inputs{Workload: w, WorkloadName: name, Cluster: jcl, Conf: in.Conf, ConfPath: in.ConfPath}, opt)
		if err != nil {
			return nil, BadInputf("%s: job %s: %v", where(placement), j.Name, err)
		}
		out[i] = Job{Name: j.Name, Sim: s, Start: engine.Time(j.StartUs * float64(engine.Microsecond)), Iterations: j.Iterations}
	}
	return out, nil
}

func isExample(path string) bool { return strings.HasPrefix(path, configs.ExamplePrefix) }
