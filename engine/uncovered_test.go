package engine

// uncovered is the simple reference search the checker's gap() is compared
// against in tests; gap() picks its split facts better and is what runs.
// uncovered returns an assignment inside region that none of the cubes in
// cover contains, or nil when the cover is complete. It splits the region on
// one fact at a time, keeping only cubes that still meet the branch, so the
// search is exact over the finite domains but rarely touches every point.
func uncovered(set *TableSet, region cube, cover []cube) []uint8 {
	var live []cube
	for _, c := range cover {
		if x, ok := c.intersect(region); ok {
			if x.contains(region) {
				return nil
			}
			live = append(live, x)
		}
	}
	if len(live) == 0 {
		return region.pick()
	}
	// Split on the first fact where some live cube is narrower than region.
	split := -1
	for _, c := range live {
		for i := range c {
			if c[i] != region[i] {
				split = i
				break
			}
		}
		if split >= 0 {
			break
		}
	}
	for vi := 0; vi < len(set.Facts[split].Values); vi++ {
		bit := uint64(1) << uint(vi)
		if region[split]&bit == 0 {
			continue
		}
		sub := make(cube, len(region))
		copy(sub, region)
		sub[split] = bit
		if ex := uncovered(set, sub, live); ex != nil {
			return ex
		}
	}
	return nil
}
