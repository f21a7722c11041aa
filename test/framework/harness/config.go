package harness

import (
	"os"

	"go.uber.org/zap/zapcore"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
)

// zapLevel keeps test output to the test's own words: scenarios that
// provoke API errors on purpose would otherwise fill it with reconcile
// errors. KRTT_TEST_LOG=error or =debug shows the operator's log.
func zapLevel() zapcore.Level {
	switch os.Getenv("KRTT_TEST_LOG") {
	case "debug":
		return zapcore.DebugLevel
	case "error":
		return zapcore.ErrorLevel
	}
	return zapcore.DPanicLevel
}

// ctrlConfig lets several managers (restarts) register the same controller
// name in one process.
func ctrlConfig() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}
