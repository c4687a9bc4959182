// Package netmodel moves bytes: it holds simd's network models, the flow state, the max-min
// solver, the DAG runner that releases a collective's flows as their parents arrive, and the
// FCT and PFC logs, and the link sampler (links.go) behind links.csv and link_classes.csv.
//
// Two models sit behind the workload runner's Network interface. The analytical model is
// SimAI_analytical's: a collective costs no simulated time when it is issued and is priced
// afterwards by a closed-form formula (ccl/analytical), so cmd/simd runs the analytical mode
// with no network at all. The event model — fluid max-min sharing of every flow on its routed
// path, with congestion control from package cc — is built here next; netmodel knows links and
// flows, never collectives, and never parses files.
package netmodel
