package door

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/krtt-dev/krtt/api/kit"
)

// GroupVersion is the API group of the Door (testdata/crd.yaml).
var GroupVersion = schema.GroupVersion{Group: "example.krtt.dev", Version: "v1"}

// AddToScheme registers Door and DoorList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Door{}, &DoorList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Door is the example's API type.
type Door struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DoorSpec   `json:"spec,omitempty"`
	Status            DoorStatus `json:"status,omitempty"`
}

// DoorSpec is what the user asks for.
type DoorSpec struct {
	Open bool `json:"open,omitempty"`
	// AutoCloseSeconds closes an open Door after this long (the Open
	// state's wait reads it by its path); 0 keeps it open.
	AutoCloseSeconds int64 `json:"autoCloseSeconds,omitempty"`
}

// DoorStatus holds the fields the kit writes (state, phase,
// observedGeneration, lastTransition, conditions) under the names every
// krtt type uses, and the Door's own.
type DoorStatus struct {
	State              string              `json:"state,omitempty"`
	StateSince         *metav1.Time        `json:"stateSince,omitempty"`
	Phase              string              `json:"phase,omitempty"`
	ObservedGeneration int64               `json:"observedGeneration,omitempty"`
	LastTransition     *kit.LastTransition `json:"lastTransition,omitempty"`
	Conditions         []metav1.Condition  `json:"conditions,omitempty"`
	// OpenedAt is when the Door opened: the Open state's wait counts from it.
	OpenedAt *metav1.Time `json:"openedAt,omitempty"`
	OpenedBy string       `json:"openedBy,omitempty"`
}

// GetRecord, SetRecord, GetConditions and SetConditions make *Door a
// kit.Status: the kit reads and writes its status through them.
func (d *Door) GetRecord() kit.Record {
	s := d.Status
	return kit.Record{State: s.State, StateSince: s.StateSince, Phase: s.Phase,
		ObservedGeneration: s.ObservedGeneration, LastTransition: s.LastTransition}
}

func (d *Door) SetRecord(r kit.Record) {
	s := &d.Status
	s.State, s.StateSince, s.Phase, s.ObservedGeneration, s.LastTransition =
		r.State, r.StateSince, r.Phase, r.ObservedGeneration, r.LastTransition
}

func (d *Door) GetConditions() []metav1.Condition  { return d.Status.Conditions }
func (d *Door) SetConditions(c []metav1.Condition) { d.Status.Conditions = c }

var _ kit.Status = &Door{}

// DoorList is a list of Doors.
type DoorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Door `json:"items"`
}

// DeepCopyObject and DeepCopyInto are what controller-gen would generate
// (`controller-gen object`); written by hand to keep the example one
// package with no generator.
func (d *Door) DeepCopyObject() runtime.Object { return d.DeepCopy() }

func (d *Door) DeepCopy() *Door {
	if d == nil {
		return nil
	}
	out := new(Door)
	d.DeepCopyInto(out)
	return out
}

func (d *Door) DeepCopyInto(out *Door) {
	*out = *d
	d.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	s, o := &d.Status, &out.Status
	o.StateSince = s.StateSince.DeepCopy()
	o.LastTransition = s.LastTransition.DeepCopy()
	o.OpenedAt = s.OpenedAt.DeepCopy()
	if s.Conditions != nil {
		o.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&o.Conditions[i])
		}
	}
}

func (l *DoorList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(DoorList)
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Door, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
