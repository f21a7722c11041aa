package machine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/krtt-dev/krtt/engine"
	"github.com/krtt-dev/krtt/test/framework/poll"
)

// A drain pass's evictions go out together, never more than
// maxParallelEvictions at once, and only for the Pods whose verdict says so.
func TestEvictAllSendsThePassTogetherWithinTheBound(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	const n = 25
	var verdicts []podVerdict
	for i := range n + 2 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%02d", i)},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		poll.Must(t, env.Client.Create(ctx, p))
		verdict := verdictEvict
		if i >= n {
			verdict = verdictSkip // a DaemonSet Pod, say: never evicted
		}
		verdicts = append(verdicts, podVerdict{pod: p, dec: engine.ItemDecision{Row: &engine.DecisionRow{Verdict: verdict}}})
	}

	// Each eviction waits until maxParallelEvictions are in flight (or 10 s
	// pass), so the highest count seen shows whether they went together.
	var mu sync.Mutex
	inFlight, most, sent := 0, 0, 0
	full := make(chan struct{})
	var opened sync.Once
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1 // no client-side rate limit: it would serialise the evictions itself
	real, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Client.Scheme()})
	poll.Must(t, err)
	c := interceptor.NewClient(real, interceptor.Funcs{
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			mu.Lock()
			inFlight++
			sent++
			if inFlight > most {
				most = inFlight
			}
			if inFlight == maxParallelEvictions {
				opened.Do(func() { close(full) })
			}
			mu.Unlock()
			select {
			case <-full:
			case <-time.After(10 * time.Second):
			}
			err := c.SubResource(sub).Create(ctx, obj, subObj, opts...)
			mu.Lock()
			inFlight--
			mu.Unlock()
			return err
		},
	})

	got := evictAll(ctx, c, verdicts, false)
	if most != maxParallelEvictions {
		t.Errorf("at most %d evictions were in flight at once, want %d", most, maxParallelEvictions)
	}
	if sent != n || len(got) != n {
		t.Fatalf("sent %d evictions with %d answers, want %d: only the Evict verdicts", sent, len(got), n)
	}
	for i := range n {
		if err, ok := got[i]; !ok || err != nil {
			t.Errorf("eviction of %s: answered %v, err %v", verdicts[i].pod.Name, ok, err)
		}
	}
	for _, pv := range verdicts {
		p := &corev1.Pod{}
		poll.Must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(pv.pod), p))
		if evictedNow := p.DeletionTimestamp != nil; evictedNow != (pv.verdict() == verdictEvict) {
			t.Errorf("Pod %s (verdict %s): being deleted = %v", p.Name, pv.verdict(), evictedNow)
		}
	}
}
