package features

import (
	"context"
	"fmt"
	"time"

	"github.com/cucumber/godog"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// registerCertificatesSteps: status.certificatesExpiryDate from the
// certificates-expiry annotation.
func registerCertificatesSteps(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the Machine "([^"]*)" has annotation "([^"]*)" set to "([^"]*)"$`, w.setAnnotation)
	sc.Step(`^the Machine "([^"]*)" reports certificates expiring at "([^"]*)"$`, w.certificatesExpireAt)
	sc.Step(`^the Machine "([^"]*)" reports no certificates expiry date$`, w.noCertificatesExpiry)
	sc.Step(`^the Machine "([^"]*)" has no condition "([^"]*)"$`, w.noCondition)
}

// setAnnotation remembers how many rows had fired for the Machine before the
// change, so a later check can wait for a decision made after it.
func (w *world) setAnnotation(ctx context.Context, name, key, value string) error {
	if w.decided == nil {
		w.decided = map[string]int{}
	}
	w.decided[name] = len(w.h.Traces(w.key(name)))
	return w.updateMachine(ctx, name, func(m *clusterv1.Machine) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[key] = value
	})
}

func (w *world) certificatesExpireAt(ctx context.Context, name, date string) error {
	want, err := time.Parse(time.RFC3339, date)
	if err != nil {
		return err
	}
	return w.eventually(ctx, name+" certificates expiry "+date, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if got := m.Status.CertificatesExpiryDate; got == nil || !got.Time.Equal(want) {
			return fmt.Errorf("status.certificatesExpiryDate is %v", got)
		}
		return nil
	})
}

// noCertificatesExpiry waits for a row fired after the Machine's last
// annotation change (an absent field proves nothing before that), then
// checks the field.
func (w *world) noCertificatesExpiry(ctx context.Context, name string) error {
	return w.eventually(ctx, name+" without certificates expiry", func(ctx context.Context) error {
		if n := len(w.h.Traces(w.key(name))); n <= w.decided[name] {
			return fmt.Errorf("no row fired for %s since its annotation changed", name)
		}
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		if got := m.Status.CertificatesExpiryDate; got != nil {
			return fmt.Errorf("status.certificatesExpiryDate is %v", got)
		}
		return nil
	})
}

func (w *world) noCondition(ctx context.Context, name, typ string) error {
	name = w.alias(name)
	return w.eventually(ctx, name+" without condition "+typ, func(ctx context.Context) error {
		m, err := w.machine(ctx, name)
		if err != nil {
			return err
		}
		for _, c := range m.Status.Conditions {
			if c.Type == typ {
				return fmt.Errorf("condition %s is %s/%s: %s", typ, c.Status, c.Reason, c.Message)
			}
		}
		return nil
	})
}
