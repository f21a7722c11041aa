package explain

import (
	"context"
	"fmt"
	"sort"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/krtt-dev/krtt/engine"
)

// MaxEvents is how many of the object's most recent Events a report keeps.
const MaxEvents = 10

// Report is everything krtt explain machine (or machineset) says about one
// object. The sections only one kind has (Replicas; Hooks, NodeSide,
// Deleting, WaitingOn.Forced) are fields here, filled by actions/machine and
// actions/machineset, because the JSON keeps one field order for every kind
// and the text prints them among the generic lines.
type Report struct {
	// Kind is Machine or MachineSet.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Found is false when the object does not exist.
	Found bool   `json:"found"`
	Set   string `json:"set"`
	// State is status.state, or the set's initial state when it is empty or
	// unknown to the tables.
	State            string `json:"state"`
	StateDescription string `json:"stateDescription,omitempty"`
	// StateNote says why State is not status.state, when it is not.
	StateNote string `json:"stateNote,omitempty"`
	Phase     string `json:"phase"`
	// DeletionRequested is the object's deletionTimestamp.
	DeletionRequested *time.Time `json:"deletionRequested,omitempty"`
	// Now is the time the report was computed for.
	Now time.Time `json:"now"`

	// Facts is every fact as the operator computes it now.
	Facts map[string]string `json:"facts"`
	// FactOrder lists the facts in the set's order.
	FactOrder []string `json:"-"`
	// ImpossibleFacts names the declared impossible combination the
	// observed facts fall into, if any.
	ImpossibleFacts string `json:"impossibleFacts,omitempty"`
	// ObserveError is the first API error met while observing.
	ObserveError string `json:"observeError,omitempty"`

	// Fires is the row that fires now; nil when none does.
	Fires *FiredRow `json:"fires"`
	// DecideError says why no row fires.
	DecideError string `json:"decideError,omitempty"`
	// Others says, for every other row of the state, why it does not fire.
	Others []OtherRow `json:"others"`
	// Releases lists the single fact changes that would make another row fire.
	Releases []Release `json:"wouldRelease"`

	// Replicas are a MachineSet's counts.
	Replicas *Replicas `json:"replicas,omitempty"`
	// WaitingOn is the deletion step the object waits in, when it does.
	WaitingOn *Wait `json:"waitingOn,omitempty"`
	// Hooks are the deletion hook annotations on the Machine.
	Hooks []Hook `json:"hooks"`
	// NodeSide says which cluster the Node side was read from and how the
	// connection to it stands (the fact workloadCluster).
	NodeSide *NodeSide `json:"nodeSide,omitempty"`
	// Deleting is the Deleting condition.
	Deleting *Condition `json:"deletingCondition,omitempty"`
	// LastTransition is status.lastTransition.
	LastTransition *Transition `json:"lastTransition,omitempty"`
	// Events are the most recent Events about the object, oldest first.
	Events      []Event `json:"events"`
	EventsError string  `json:"eventsError,omitempty"`
}

// FiredRow is the row that fires, with its five human columns and its
// result for each way its actions can end.
type FiredRow struct {
	Table string `json:"table"`
	Row   string `json:"row"`
	File  string `json:"file"`
	Line  int    `json:"line"`
	Columns
	When     []Match   `json:"when"`
	Guards   []string  `json:"guards"`
	Do       []string  `json:"do"`
	Outcomes []Outcome `json:"outcomes"`
}

// Match is one fact of a row's when clause and the values it accepts.
type Match struct {
	Fact   string   `json:"fact"`
	Values []string `json:"values"`
}

// Outcome is the row's result for one way its actions can end.
type Outcome struct {
	// Branch is then, inProgress or onFailure.
	Branch string `json:"branch"`
	// Given is false when the row does not write this branch and the
	// runtime's default applies.
	Given bool `json:"given"`
	// Arises is false for inProgress and onFailure of a row without actions.
	Arises       bool   `json:"arises"`
	To           string `json:"to"`
	Changed      bool   `json:"changed"`
	RequeueAfter string `json:"requeueAfter,omitempty"`
	RequeueAt    string `json:"requeueAt,omitempty"`
	Retry        bool   `json:"retry"`
	// StatusUnchanged: the row writes nothing to status but its conditions.
	StatusUnchanged bool          `json:"statusUnchanged,omitempty"`
	Conditions      []Condition   `json:"conditions,omitempty"`
	Status          []StatusValue `json:"status,omitempty"`
}

// Condition is a condition as a row writes it or as the Machine shows it.
type Condition struct {
	Type    string     `json:"type"`
	Status  string     `json:"status"`
	Reason  string     `json:"reason"`
	Message string     `json:"message,omitempty"`
	Since   *time.Time `json:"lastTransitionTime,omitempty"`
}

// OtherRow says why a row of the state does not fire.
type OtherRow struct {
	Table string `json:"table"`
	Row   string `json:"row"`
	Line  int    `json:"line"`
	// Verdict is mismatch (facts rule it out), masked (it matches but an
	// earlier row of a hitPolicy first table wins), not-consulted (a table
	// consulted earlier decided) or shadowed (not consulted, and it would
	// have matched).
	Verdict string `json:"verdict"`
	// Mismatches are all the facts that rule the row out.
	Mismatches []FactMismatch `json:"mismatches,omitempty"`
	Reason     string         `json:"reason"`
}

// FactMismatch is one fact whose value a row does not accept.
type FactMismatch struct {
	Fact  string   `json:"fact"`
	Value string   `json:"value"`
	Wants []string `json:"wants"`
}

// Release is a single fact change that would make a different row fire.
type Release struct {
	Fact   string `json:"fact"`
	From   string `json:"from"`
	To     string `json:"to"`
	Table  string `json:"table"`
	Row    string `json:"row"`
	Action string `json:"action"`
	// Then is the state the row moves to when its actions finish.
	Then string `json:"then"`
}

// Wait is the step an object waits in, as its state's wait declares it.
type Wait struct {
	// Step names the step in words.
	Step string `json:"step"`
	// On says what has to happen for the step to end.
	On string `json:"on"`
	// StartField is the status field that records when the step started.
	StartField string     `json:"startField,omitempty"`
	Since      *time.Time `json:"since,omitempty"`
	// For is how long the step has been waiting.
	For string `json:"for,omitempty"`
	// TimeoutField is the spec field that bounds the step, if any.
	TimeoutField   string `json:"timeoutField,omitempty"`
	TimeoutSeconds int32  `json:"timeoutSeconds"`
	// Timeout describes the timeout in words.
	Timeout string     `json:"timeout"`
	EndsAt  *time.Time `json:"endsAt,omitempty"`
	// CountsFrom is set when the timeout counts from a later time than
	// Since: the workload cluster came back after an outage, and Node-side
	// timeouts restart then (machine.TimeoutSince).
	CountsFrom *time.Time `json:"countsFrom,omitempty"`
	// EndsIn is the time left; Overdue is set when the timeout has passed.
	EndsIn  string `json:"endsIn,omitempty"`
	Overdue bool   `json:"overdue,omitempty"`
	// Forced is the other end of the wait: the Node unhealthy for longer
	// than machine.NodeUnhealthyForce forces the deletion, in the states
	// where a row reads forceDeletion=NodeUnhealthy.
	Forced *ForcedEnd `json:"forced,omitempty"`
}

// ForcedEnd is when an unhealthy Node forces the deletion: since when the
// Node is Ready=False/Unknown or ReadonlyFilesystem=True, and when the
// grace ends.
type ForcedEnd struct {
	// Row is the row that forces the deletion in the state.
	Row string `json:"row"`
	// Condition is the Node condition that counts (Ready=False, ...);
	// empty while the Node is healthy.
	Condition string     `json:"condition,omitempty"`
	Since     *time.Time `json:"since,omitempty"`
	// CountsFrom is set when the 5 minutes count from a later time than
	// Since: the workload cluster came back after an outage.
	CountsFrom *time.Time `json:"countsFrom,omitempty"`
	After      string     `json:"after"`
	EndsAt     *time.Time `json:"endsAt,omitempty"`
	EndsIn     string     `json:"endsIn,omitempty"`
	Overdue    bool       `json:"overdue,omitempty"`
}

// Hook is one deletion hook annotation.
type Hook struct {
	// Point is pre-drain or pre-terminate.
	Point      string `json:"point"`
	Name       string `json:"name"`
	Annotation string `json:"annotation"`
	Owner      string `json:"owner,omitempty"`
}

// Transition is status.lastTransition.
type Transition struct {
	Table   string    `json:"table"`
	Row     string    `json:"row"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Action  string    `json:"action,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
	Time    time.Time `json:"time"`
	Message string    `json:"message,omitempty"`
	// Via are the rows the same reconcile fired before this one (run to
	// completion), oldest first.
	Via []ViaRow `json:"via,omitempty"`
}

// ViaRow is a row a reconcile passed through before its last one.
type ViaRow struct {
	Table   string `json:"table"`
	Row     string `json:"row"`
	From    string `json:"from"`
	To      string `json:"to"`
	Action  string `json:"action,omitempty"`
	Message string `json:"message,omitempty"`
}

// Event is one Event about the object.
type Event struct {
	Time   time.Time `json:"time"`
	Type   string    `json:"type"`
	Reason string    `json:"reason"`
	Action string    `json:"action,omitempty"`
	Note   string    `json:"note"`
	// Count is how often the Event was seen (1, or the series count).
	Count      int32  `json:"count"`
	Controller string `json:"reportingController,omitempty"`
}

// NodeSide is the cluster that holds the Machine's Node and Pods.
type NodeSide struct {
	// State is Connected, SelfHosted, Unreachable or NoAccess.
	State   string `json:"state"`
	Server  string `json:"server,omitempty"`
	Secret  string `json:"secret,omitempty"`
	Message string `json:"message,omitempty"`
}

// Replicas is what a MachineSet counts, for its report.
type Replicas struct {
	// Total is every Machine of the set (Working + Failed + Deleting),
	// what Desired is compared with.
	Desired, Total, Working, Failed, Deleting, Ready, Available, UpToDate int
	MaxUnhealthy, MaxInFlight                                             int
	// Burst caps creations and deletions per reconcile.
	Burst int
	// Orphans wait to be adopted; Strays to be released.
	Orphans, Strays  int
	MissingTemplates []string `json:",omitempty"`
}

// Fired describes the row that fires, with its result for each way its
// actions can end (the runtime's own Resolve, defaults included, the
// action message kept as the {detail} placeholder). krtt decide and krtt
// explain report it the same way.
func Fired(d *engine.Decision) *FiredRow {
	r := d.Row
	out := &FiredRow{
		Table: d.Table.Name, Row: r.ID, File: r.Pos.File, Line: r.Pos.Line, Columns: ColumnsOf(r),
		When: matches(r.WhenClause()), Guards: append([]string{}, r.Guards...), Do: append([]string{}, r.Do...),
	}
	for _, res := range Results(d) {
		oc := Outcome{Branch: res.Branch, Given: res.Given, Arises: res.Arises,
			To: res.To, Changed: res.Changed(), RequeueAt: res.RequeueAt, Retry: res.Retry, StatusUnchanged: res.StatusUnchanged}
		if res.RequeueAfter > 0 {
			oc.RequeueAfter = shortDuration(res.RequeueAfter)
		}
		for _, c := range res.Conditions {
			oc.Conditions = append(oc.Conditions, Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
		for _, st := range res.Status {
			oc.Status = append(oc.Status, StatusValue{Field: st.Field, Value: st.Value})
		}
		out.Outcomes = append(out.Outcomes, oc)
	}
	return out
}

// Summary turns the outcome back into the engine's summary, for its text;
// from is the state the row fires in.
func (o Outcome) Summary(from string) ResultSummary {
	s := ResultSummary{Branch: o.Branch, Given: o.Given, Arises: o.Arises, From: from, To: o.To, RequeueAt: o.RequeueAt, Retry: o.Retry,
		StatusUnchanged: o.StatusUnchanged}
	if o.RequeueAfter != "" {
		// RequeueAfter was printed by shortDuration and parses back.
		s.RequeueAfter, _ = time.ParseDuration(o.RequeueAfter)
	}
	for _, c := range o.Conditions {
		s.Conditions = append(s.Conditions, engine.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
	}
	for _, st := range o.Status {
		s.Status = append(s.Status, StatusValue{Field: st.Field, Value: st.Value})
	}
	return s
}

// matches converts a when clause for the report.
func matches(ms []engine.Match) []Match {
	out := []Match{}
	for _, m := range ms {
		out = append(out, Match{Fact: m.Fact, Values: m.Values})
	}
	return out
}

// OtherRows says, for every row of the state other than the one that fired,
// why it does not fire (engine.TableSet.OtherRows): Mismatches names every fact
// that rules a row out, the Reason text the first reasons of them (0: all).
func OtherRows(set *engine.TableSet, st *engine.State, f engine.Facts, d *engine.Decision, reasons int) []OtherRow {
	out := []OtherRow{}
	for _, v := range RowVerdicts(set, st, f, d) {
		o := OtherRow{Table: v.Table.Name, Row: v.Row.ID, Line: v.Row.Pos.Line, Verdict: string(v.Verdict), Reason: v.Reason(reasons)}
		for _, m := range v.Mismatches {
			o.Mismatches = append(o.Mismatches, FactMismatch{Fact: m.Match.Fact, Value: m.Value, Wants: append([]string{}, m.Match.Values...)})
		}
		out = append(out, o)
	}
	return out
}

// Releases flips, one at a time, every fact the firing row's when clause
// reads to each of its other values and asks the set which
// row would fire then; it returns the flips that lead to a different row.
// Combinations the set declares impossible are left out.
func Releases(set *engine.TableSet, st *engine.State, f engine.Facts, d *engine.Decision) []Release {
	out := []Release{}
	for _, m := range d.Row.WhenClause() {
		fact := set.Fact(m.Fact)
		if fact == nil {
			continue
		}
		cur := f.Get(m.Fact)
		for _, v := range fact.Values {
			if v.Name == cur {
				continue
			}
			g := f.Clone()
			if err := g.Set(m.Fact, v.Name); err != nil {
				continue
			}
			if set.ImpossibleHit(g) != nil {
				continue
			}
			nd, err := set.Decide(context.Background(), st.Name, g)
			if err != nil || nd.Row == d.Row {
				continue
			}
			then := nd.Apply(engine.Outcome{Status: engine.Done}).To.Name
			out = append(out, Release{Fact: m.Fact, From: cur, To: v.Name, Table: nd.Table.Name, Row: nd.Row.ID,
				Action: nd.Row.Action, Then: then})
		}
	}
	return out
}

// WaitFromTiming describes a state's wait with the engine's timing of it
// (engine.WaitTimingOf, StateWait.Timing): the timed-out facts and the
// kit's wake-up at the deadline read the same timing, so explain agrees
// with them.
func WaitFromTiming(sw *engine.StateWait, t engine.WaitTiming, now time.Time) *Wait {
	w := &Wait{Step: sw.Step, On: sw.On}
	if sw.Since != "" {
		w.StartField = sw.Since
		if !t.Since.IsZero() {
			w.setStart(&metav1.Time{Time: t.Since}, now)
		}
	}
	if sw.Timeout == "" {
		w.Timeout = "no timeout: " + sw.NoTimeout
		return w
	}
	var seconds *int32
	if t.Seconds != nil {
		x := int32(*t.Seconds)
		seconds = &x
	}
	field := sw.Timeout
	if _, fixed := sw.FixedTimeout(); fixed {
		field = "fixed in the tables"
	}
	w.setTimeout(field, seconds, now)
	if w.EndsAt != nil && t.CountsFrom.After(t.Since) {
		// After an outage of the workload cluster a Node-side timeout
		// counts from when it came back (the wait's countFrom).
		from := t.CountsFrom.UTC()
		w.CountsFrom = &from
		w.SetEnd(from.Add(time.Duration(w.TimeoutSeconds)*time.Second), now)
	}
	return w
}

func (w *Wait) setStart(t *metav1.Time, now time.Time) {
	if t == nil || t.IsZero() {
		return
	}
	start := t.UTC()
	w.Since = &start
	w.For = shortDuration(now.Sub(start))
}

func (w *Wait) SetExternalStart(u *unstructured.Unstructured, now time.Time) {
	if u == nil {
		return
	}
	if ts := u.GetDeletionTimestamp(); ts != nil {
		w.StartField = "metadata.deletionTimestamp of the object"
		w.setStart(ts, now)
	}
}

func (w *Wait) setTimeout(field string, seconds *int32, now time.Time) {
	w.TimeoutField = field
	if seconds == nil || *seconds <= 0 {
		w.Timeout = "no timeout, waits forever (" + field + " is 0 or unset)"
		return
	}
	w.TimeoutSeconds = *seconds
	d := time.Duration(*seconds) * time.Second
	w.Timeout = shortDuration(d) + " (" + field + ")"
	if w.Since == nil {
		return
	}
	w.SetEnd(w.Since.Add(d), now)
}

// SetEnd sets when the wait's timeout ends and the time left.
func (w *Wait) SetEnd(end time.Time, now time.Time) {
	w.EndsAt, w.Overdue = &end, false
	if left := end.Sub(now); left > 0 {
		w.EndsIn = shortDuration(left)
	} else {
		w.Overdue = true
		w.EndsIn = "-" + shortDuration(-left)
	}
}

// ObjectEvents lists an object's Events (events.k8s.io/v1, which the
// operator writes through), newest last, at most MaxEvents.
func ObjectEvents(ctx context.Context, c client.Client, kind string, m client.Object) ([]Event, error) {
	list := &eventsv1.EventList{}
	sel := fields.SelectorFromSet(fields.Set{"regarding.name": m.GetName(), "regarding.kind": kind})
	if err := c.List(ctx, list, client.InNamespace(m.GetNamespace()), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		// Fall back to filtering here, for servers or clients without the
		// field selector.
		list = &eventsv1.EventList{}
		if err2 := c.List(ctx, list, client.InNamespace(m.GetNamespace())); err2 != nil {
			return nil, fmt.Errorf("list Events: %w", err)
		}
	}
	var out []Event
	for i := range list.Items {
		e := &list.Items[i]
		if e.Regarding.Kind != kind || e.Regarding.Name != m.GetName() || (e.Regarding.UID != "" && e.Regarding.UID != m.GetUID()) {
			continue
		}
		ev := Event{Time: eventTime(e), Type: e.Type, Reason: e.Reason, Action: e.Action, Note: e.Note, Count: 1, Controller: e.ReportingController}
		if e.Series != nil && e.Series.Count > 0 {
			ev.Count = e.Series.Count
		} else if e.DeprecatedCount > 1 {
			ev.Count = e.DeprecatedCount
		}
		out = append(out, ev)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	if len(out) > MaxEvents {
		out = out[len(out)-MaxEvents:]
	}
	if out == nil {
		out = []Event{}
	}
	return out, nil
}

func eventTime(e *eventsv1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.UTC()
	case !e.EventTime.IsZero():
		return e.EventTime.UTC()
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.UTC()
	}
	return e.CreationTimestamp.UTC()
}

// shortDuration prints a duration rounded to the second, 2m rather than 2m0s.
func shortDuration(d time.Duration) string {
	return engine.ShortDuration(d.Round(time.Second))
}
