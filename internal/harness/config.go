package harness

import (
	"os"

	"go.uber.org/zap/zapcore"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
)

// zapLevel is quiet unless KRTT_TEST_LOG=debug.
func zapLevel() zapcore.Level {
	if os.Getenv("KRTT_TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// ctrlConfig lets several managers (restarts) register the same controller
// name in one process.
func ctrlConfig() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}
