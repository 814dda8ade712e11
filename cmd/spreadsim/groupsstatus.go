package main

import (
	"path"
	"slices"
	"strings"

	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/api"
)

// statusMatch assigns the node groups of CA's status to the groups found
// by label. CA names a node group by its cloud provider's id, which holds
// the label's value: an EKS managed node group ng-a is the ASG
// "eks-ng-a-<uuid>", a GKE node pool pool-b the MIG
// ".../instanceGroups/gke-<cluster>-pool-b-<hash>-grp", an AKS agent pool
// the VMSS "aks-<pool>-<id>-vmss". A status node group therefore belongs to
// the group whose name equals it, else to the group whose name, split at
// "-", is the longest run of the "-"-separated words of the last "/"
// segment of the status name (no group when two match as long). The
// result maps a group's name to its status node groups, in status order;
// unmatched lists the status node groups no group took.
func statusMatch(groups []string, st *api.ClusterAutoscalerStatus) (matched map[string][]api.NodeGroupStatus, unmatched []api.NodeGroupStatus) {
	matched = map[string][]api.NodeGroupStatus{}
	if st == nil {
		return matched, nil
	}
	for _, ng := range st.NodeGroups {
		if g := statusOwner(groups, ng.Name); g != "" {
			matched[g] = append(matched[g], ng)
			continue
		}
		unmatched = append(unmatched, ng)
	}
	return matched, unmatched
}

// statusOwner is the group a status node group name belongs to (see
// statusMatch), "" for none.
func statusOwner(groups []string, name string) string {
	if slices.Contains(groups, name) {
		return name
	}
	words := strings.Split(path.Base(name), "-")
	best, bestLen, tie := "", 0, false
	for _, g := range groups {
		gw := strings.Split(g, "-")
		if len(gw) < bestLen || !containsRun(words, gw) {
			continue
		}
		if len(gw) == bestLen {
			tie = true
			continue
		}
		best, bestLen, tie = g, len(gw), false
	}
	if tie {
		return ""
	}
	return best
}

// containsRun reports whether run occurs in words as consecutive words.
func containsRun(words, run []string) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		if slices.Equal(words[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// nodeGroupName makes s a NodeGroup name (a DNS subdomain): lowercase,
// characters other than letters, digits, "-" and "." become "-", and
// neither end is "-" or ".".
func nodeGroupName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-.")
}
