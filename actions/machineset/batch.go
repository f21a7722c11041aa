package machineset

import (
	"errors"
	"sync"
)

// SlowStart runs fn for 0..total-1 in batches of 1, 2, 4, ... (MCM
// slowStartBatch): the calls of a batch run concurrently, and a batch with
// a failure ends the run, so a broken template costs one failed call, not
// a hundred. It returns how many calls succeeded and the failures of the
// last batch.
func SlowStart(total int, fn func(i int) error) (int, error) {
	done, batch := 0, 1
	for start := 0; start < total; batch *= 2 {
		n := min(batch, total-start)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for k := 0; k < n; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				errs[k] = fn(start + k)
			}(k)
		}
		wg.Wait()
		start += n
		var failed []error
		for _, err := range errs {
			if err != nil {
				failed = append(failed, err)
			} else {
				done++
			}
		}
		if len(failed) > 0 {
			return done, errors.Join(failed...)
		}
	}
	return done, nil
}
