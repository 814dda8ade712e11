// Package plugin wires spreadscale into cluster-autoscaler: Build is the one
// function that assembles the scale-up parts of CA — the binpacking
// estimator, the --expander chain, the scale-up orchestrator — with
// spreadscale's orchestrator wrapper, estimator, expander filter and
// processors when the flags ask for it, and the scale-down guard (package
// scaledown) around CA's scale-down processors. The custom CA main
// (cmd/cluster-autoscaler) and the simulation harness (test/sim) both call
// it, so the simulator runs exactly what users deploy.
//
// # The one-plan protocol
//
// CA's ScaleUp evaluates one node group at a time and executes one option.
// spreadscale plans the whole loop at once, across groups and zones, and
// makes CA execute that plan through five hooks that read one immutable
// value, plan.Current, published before CA's ScaleUp starts and cleared
// after it:
//
//  1. Orchestrator.ScaleUp (this package) computes the loop's plan
//     (plan.PlanLoop) and publishes it; it hands CA the pending pods as
//     decidedPods, copies whose spread the plan has decided, and matches
//     CA's status back to the original pods by pointer identity.
//  2. processors.PlanGroups offers CA only the plan's groups, so CA's
//     per-group checks run where the plan scales.
//  3. estimator.NewBuilder estimates a plan group as the whole plan: all its
//     new nodes and all the pods it places, which is why an estimate is
//     larger than the group alone: the plan is executed as one option.
//  4. expander.NewFilter ("topology-spread", first in --expander) keeps the
//     plan's option, so the user's expanders after it decide only inside a
//     domain, where the plan asked them (plan's ranking).
//  5. processors.Balancer splits that one option between the plan's groups
//     exactly as planned when CA executes it.
//
// Without a plan (no pending pod with a DoNotSchedule constraint), every
// hook passes CA's own behaviour through unchanged.
package plugin
