// Package processors holds spreadscale's cluster-autoscaler processors: the
// TemplateNodeInfoProvider wrapper that applies declared topology domains to
// node group templates, and the NodeGroupSetProcessor that executes a
// multi-group scale-up plan in CA's single-option scale-up.
package processors
