// Package arrival is spreadscale's arrival barrier: it holds the new nodes
// of a scale-up out of kube-scheduler's reach until every topology domain
// the scale-up opened has a registered node.
//
// kube-scheduler knows a topology domain only once a node of it has
// registered. A scale-up that opens zones b and c beside zone a is planned
// as a 2/2/2 spread; if zone a's node registers a minute before the others,
// kube-scheduler sees one zone, whose count is the global minimum, and
// binds the whole spread there (4/2/0). The barrier prevents that with a
// NoSchedule taint the node groups register their nodes with (the arrival
// taint): a held node is already a domain for the spreads that count
// tainted nodes (nodeTaintsPolicy Ignore, the default), takes no pod, and
// CA counts it as not ready yet when the taint's key carries CA's startup
// taint prefix. Once every domain is known, the barrier removes the taint
// from every node of the scale-up at once.
//
// The rules, each in one place:
//   - A Plan records one executed scale-up: its time, the nodes it asked of
//     each group, and the domains it awaits (NewPlan): for each topology key
//     of the spreads of its pods, the values its groups' templates carry
//     that no registered node carried when it was made; for a hostname
//     spread, every node it asked for.
//   - A registered node carrying the taint is held while the newest live
//     plan that asked its group awaits a domain (Barrier.Decide).
//   - It is released, with its Cause, when the plan's domains have all
//     registered, when a group of the plan failed (its scale-up failed, it
//     is backed off, or its nodes timed out), when it has been held for the
//     hold timeout, or when no live plan asked its group (a restart, a node
//     the barrier never planned). Nothing is held forever.
//
// The package reads nodes only; the callers (test/sim, and the binary's
// controller in processors) remove the taint, emit events and count the
// releases.
package arrival
