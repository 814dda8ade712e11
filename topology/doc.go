// Package topology is spreadscale's spread semantics: the exact rules of
// kube-scheduler v1.33.1's PodTopologySpread plugin (constraints and their
// defaults, inclusion policies, counting, admission, the global minimum,
// the skew inequality, the hostname cap, the combination key), evaluated
// over a domain universe that includes node groups scaled to zero. The
// scale-up search built on it is package planner; scale-down reads only
// this package. It imports neither cluster-autoscaler nor any other
// package of spreadscale.
//
// # Two views of the same cluster
//
// The scheduler view is what kube-scheduler sees: only nodes that exist (real
// nodes, plus the nodes a plan has decided to add once they register). A
// topology domain exists for a constraint only while at least one eligible
// node carries it. Filter decisions (Admit, Counts) are always made in this
// view, because it is the one the real scheduler will apply when the pending
// pods are scheduled.
//
// The planning view adds every node-group template as a possible domain, size
// zero included. A domain is realized when it has at least one eligible node
// in the scheduler view, and possible when it could only be reached by
// scaling a group. The planner (planner.PlanScaleUp) uses the planning view
// to decide where to open nodes, and checks every placement it makes in the
// scheduler view that will hold once those nodes exist: a zero-size domain
// counts only after the plan gives it a node. One rule of the planning view
// reaches into the counts: under a hard hostname constraint, the next node
// of a group that can still grow is a hostname domain at count 0, so the
// constraint's global minimum is 0 while one is offered (HostnameMinMatch);
// a Universe without groups counts exactly as the plugin does.
//
// # Rules mirrored from the scheduler
//
// For each DoNotSchedule constraint of the incoming pod, the plugin computes,
// over all nodes that carry every topology key of the pod's hard constraints
// and pass the constraint's node inclusion policies, the number of matching
// pods per topology value; a node passes Filter when, for every constraint,
//
//	matchNum(domain) + selfMatch - minMatchNum <= maxSkew
//
// where minMatchNum is the smallest count over those domains, or 0 when there
// are fewer such domains than minDomains. A node that lacks any of the keys
// is rejected as UnschedulableAndUnresolvable.
package topology
