package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// volumes is the storage of the simulated cluster: the Scenario's
// PersistentVolumes, PersistentVolumeClaims and StorageClasses in a fake
// API server whose informers both scheduler frameworks (CA's and the
// binding scheduler's) read, so that the real volume plugins —
// VolumeBinding, VolumeZone, VolumeRestrictions, NodeVolumeLimits — filter
// on them in CA's simulation and in the binding.
type volumes struct {
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	// empty is set when the Scenario has no storage object: the informers
	// then stay unstarted, their listers empty, as started ones would be
	// (and a Run does not wait for their sync).
	empty bool
}

// newVolumes loads the Scenario's storage objects as the API server
// stores them (a class without a volumeBindingMode gets Immediate, the API
// server's default), with pre-bound pairs bound as the PV controller binds
// them (see bindPreBound), PVs that no claim holds Available (a phase the
// scenario states is kept), then the other claims that do not wait for a
// consumer bound or provisioned as the PV controller and the provisioner do
// before any pod is scheduled (bindImmediate).
func newVolumes(s Scenario) *volumes {
	var objs []runtime.Object
	pvs := map[string]*apiv1.PersistentVolume{}
	for _, pv := range s.PersistentVolumes {
		pvs[pv.Name] = pv.DeepCopy()
		pvs[pv.Name].ResourceVersion = "1"
	}
	claims := make([]*apiv1.PersistentVolumeClaim, 0, len(s.PersistentVolumeClaims))
	for _, c := range s.PersistentVolumeClaims {
		c = c.DeepCopy()
		c.Namespace = namespaceOf(c)
		c.ResourceVersion = "1"
		if c.UID == "" {
			c.UID = types.UID("sim-pvc-" + c.Namespace + "-" + c.Name)
		}
		if pv := pvs[c.Spec.VolumeName]; pv != nil {
			pvs[pv.Name] = bindPreBound(pv, c)
		}
		claims = append(claims, c)
	}
	classes := make([]*storagev1.StorageClass, 0, len(s.StorageClasses))
	for _, sc := range s.StorageClasses {
		sc = sc.DeepCopy()
		sc.ResourceVersion = "1"
		if sc.VolumeBindingMode == nil {
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
		}
		classes = append(classes, sc)
	}
	for _, pv := range pvs {
		// As the PV controller's sync of a volume that no claim holds.
		if pv.Status.Phase == "" && (pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "") {
			pv.Status.Phase = apiv1.VolumeAvailable
		}
	}
	bindImmediate(claims, pvs, classes, s.Nodes)
	for _, c := range claims {
		objs = append(objs, c)
	}
	for _, name := range slices.Sorted(maps.Keys(pvs)) {
		pvs[name].ResourceVersion = "1"
		objs = append(objs, pvs[name])
	}
	for _, sc := range classes {
		objs = append(objs, sc)
	}
	client := fake.NewClientset(objs...)
	return &volumes{client: client, factory: informers.NewSharedInformerFactory(client, 0), empty: len(objs) == 0}
}

// bindPreBound completes, in place for the claim, the binding of a claim
// whose spec.volumeName names pv, as the PV controller's syncClaim does for
// a pre-bound claim when pv is available or already bound to it: pv's
// claimRef set (storagehelpers.GetBindVolumeToClaim), both Bound, the claim
// annotated bind-completed with pv's capacity and access modes. It returns
// the bound PV; a PV bound to another claim is returned unchanged (the
// claim stays unbound, as in the API server).
func bindPreBound(pv *apiv1.PersistentVolume, c *apiv1.PersistentVolumeClaim) *apiv1.PersistentVolume {
	if pv.Spec.ClaimRef != nil && !storagehelpers.IsVolumeBoundToClaim(pv, c) {
		return pv
	}
	bound, _, err := storagehelpers.GetBindVolumeToClaim(pv, c)
	if err != nil {
		return pv
	}
	bound.Status.Phase = apiv1.VolumeBound
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
	c.Status.Phase = apiv1.ClaimBound
	c.Status.Capacity = bound.Spec.Capacity
	c.Status.AccessModes = bound.Spec.AccessModes
	return bound
}

// start starts the informers the frameworks registered and waits for them.
func (v *volumes) start(ctx context.Context) {
	if v.empty {
		return
	}
	v.factory.Start(ctx.Done())
	v.factory.WaitForCacheSync(ctx.Done())
}

// provision binds every unbound WaitForFirstConsumer claim of pod, which
// the scheduler just placed on node, as the scheduler's VolumeBinding
// (PreBind) and the PV controller do: to the smallest static PV that
// matches the claim on node when there is one (bindStatic), else, through
// the selected-node annotation and a topology-aware provisioner, to a new
// PV "pvc-<claim uid>" of the claim's size, access modes and class whose
// node affinity requires the node's values of the keys of the class's
// allowedTopologies (topology.kubernetes.io/zone when it has none) — the
// domain where the pod landed. A class without a provisioner
// ("kubernetes.io/no-provisioner") provisions nothing. It waits until the
// informers see each binding.
func (v *volumes) provision(ctx context.Context, pod *apiv1.Pod, node *apiv1.Node) error {
	if v.empty {
		return nil
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		c, err := v.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, vol.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil || c.Spec.VolumeName != "" {
			continue
		}
		class, err := v.client.StorageV1().StorageClasses().Get(ctx, storagehelpers.GetPersistentVolumeClaimClass(c), metav1.GetOptions{})
		if err != nil || class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
			continue
		}
		bound, err := v.bindStatic(ctx, c, node)
		if err == nil && !bound && class.Provisioner != storagehelpers.NotSupportedProvisioner {
			err = v.bindNew(ctx, c, class, node)
		}
		if err != nil {
			return fmt.Errorf("sim: bind a volume for claim %s/%s of pod %s on node %s: %w", c.Namespace, c.Name, podKey(pod), node.Name, err)
		}
	}
	return nil
}

// bindNew creates the PV for claim c on node (see provision), binds the
// two and waits until the informers see it.
func (v *volumes) bindNew(ctx context.Context, c *apiv1.PersistentVolumeClaim, class *storagev1.StorageClass, node *apiv1.Node) error {
	pv := provisionedVolume(c, class, provisionedAffinity(class, node))
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnSelectedNode, node.Name)
	c.Spec.VolumeName = pv.Name
	pv = bindPreBound(pv, c)
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
	// The fake API server keeps resource versions as given; the scheduler's
	// assume caches need them to be increasing integers.
	pv.ResourceVersion = "1"
	c.ResourceVersion = nextVersion(c.ResourceVersion)
	if _, err := v.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := v.client.CoreV1().PersistentVolumeClaims(c.Namespace).Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return v.waitBound(ctx, c, pv.Name)
}

// waitBound waits until the informers see claim c bound to the PV named
// pv.
func (v *volumes) waitBound(ctx context.Context, c *apiv1.PersistentVolumeClaim, pv string) error {
	claims := v.factory.Core().V1().PersistentVolumeClaims().Lister()
	vols := v.factory.Core().V1().PersistentVolumes().Lister()
	return wait.PollUntilContextTimeout(ctx, time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got, err := claims.PersistentVolumeClaims(c.Namespace).Get(c.Name)
		if err != nil || got.Spec.VolumeName != pv {
			return false, nil
		}
		vol, err := vols.Get(pv)
		return err == nil && storagehelpers.IsVolumeBoundToClaim(vol, got), nil
	})
}

// provisionedVolume is the PV "pvc-<claim uid>" a provisioner creates for
// claim c of class, with affinity: the claim's size, access modes and
// volume mode, the class's reclaim policy (Delete by default) and
// provisioner (as the CSI driver), annotated as dynamically provisioned.
func provisionedVolume(c *apiv1.PersistentVolumeClaim, class *storagev1.StorageClass, affinity *apiv1.VolumeNodeAffinity) *apiv1.PersistentVolume {
	pv := &apiv1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "pvc-" + string(c.UID),
			Annotations: map[string]string{storagehelpers.AnnDynamicallyProvisioned: class.Provisioner},
		},
		Spec: apiv1.PersistentVolumeSpec{
			Capacity:                      apiv1.ResourceList{apiv1.ResourceStorage: c.Spec.Resources.Requests[apiv1.ResourceStorage]},
			AccessModes:                   c.Spec.AccessModes,
			StorageClassName:              class.Name,
			VolumeMode:                    c.Spec.VolumeMode,
			PersistentVolumeReclaimPolicy: apiv1.PersistentVolumeReclaimDelete,
			NodeAffinity:                  affinity,
			PersistentVolumeSource: apiv1.PersistentVolumeSource{
				CSI: &apiv1.CSIPersistentVolumeSource{Driver: class.Provisioner, VolumeHandle: "pvc-" + string(c.UID)},
			},
		},
	}
	if class.ReclaimPolicy != nil {
		pv.Spec.PersistentVolumeReclaimPolicy = *class.ReclaimPolicy
	}
	return pv
}

// provisionedAffinity is the node affinity of a PV provisioned for a pod
// on node: node's values of the keys of class's allowedTopologies, or of
// topology.kubernetes.io/zone when the class has none; nil when node has
// none of them.
func provisionedAffinity(class *storagev1.StorageClass, node *apiv1.Node) *apiv1.VolumeNodeAffinity {
	var keys []string
	seen := map[string]bool{}
	for _, term := range class.AllowedTopologies {
		for _, e := range term.MatchLabelExpressions {
			if !seen[e.Key] {
				seen[e.Key] = true
				keys = append(keys, e.Key)
			}
		}
	}
	if len(keys) == 0 {
		keys = []string{apiv1.LabelTopologyZone}
	}
	var reqs []apiv1.NodeSelectorRequirement
	for _, k := range keys {
		if val, ok := node.Labels[k]; ok {
			reqs = append(reqs, apiv1.NodeSelectorRequirement{Key: k, Operator: apiv1.NodeSelectorOpIn, Values: []string{val}})
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	return &apiv1.VolumeNodeAffinity{Required: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
}

// list returns the PVs, sorted by name.
func (v *volumes) list() []*apiv1.PersistentVolume {
	l, err := v.client.CoreV1().PersistentVolumes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := make([]*apiv1.PersistentVolume, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	slices.SortFunc(out, func(a, b *apiv1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
	return out
}
