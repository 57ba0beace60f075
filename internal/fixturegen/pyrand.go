package main

import (
	"fmt"
	"math"
	"math/bits"
)

// pyRandom is CPython's random.Random: the Mersenne Twister MT19937 seeded
// from an integer as CPython seeds it, and the few methods the fixtures
// draw from, each taking the same words from the generator as CPython's. The
// fixtures were first written by a Python script; drawing the same numbers
// keeps every id and timestamp of the committed files.
type pyRandom struct {
	mt  [624]uint32
	mti int
}

func newPyRandom(seed uint32) *pyRandom {
	r := &pyRandom{}
	r.initByArray([]uint32{seed})
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < len(r.mt); i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.mti = len(r.mt)
}

// initByArray is init_by_array of the reference MT19937, which CPython
// uses for every seed.
func (r *pyRandom) initByArray(key []uint32) {
	const n = 624
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(n, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := n - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

func (r *pyRandom) uint32() uint32 {
	const n, m = 624, 397
	const upper, lower = 0x80000000, 0x7fffffff
	mag01 := [2]uint32{0, 0x9908b0df}
	if r.mti >= n {
		var kk int
		for kk = 0; kk < n-m; kk++ {
			y := (r.mt[kk] & upper) | (r.mt[kk+1] & lower)
			r.mt[kk] = r.mt[kk+m] ^ (y >> 1) ^ mag01[y&1]
		}
		for ; kk < n-1; kk++ {
			y := (r.mt[kk] & upper) | (r.mt[kk+1] & lower)
			r.mt[kk] = r.mt[kk+(m-n)] ^ (y >> 1) ^ mag01[y&1]
		}
		y := (r.mt[n-1] & upper) | (r.mt[0] & lower)
		r.mt[n-1] = r.mt[m-1] ^ (y >> 1) ^ mag01[y&1]
		r.mti = 0
	}
	y := r.mt[r.mti]
	r.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// random is random.random(): 53 bits from two words.
func (r *pyRandom) random() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// uniform is random.uniform(a, b).
func (r *pyRandom) uniform(a, b float64) float64 {
	return a + (b-a)*r.random()
}

// bits is random.getrandbits(k) for k <= 32.
func (r *pyRandom) bits(k int) uint32 {
	return r.uint32() >> (32 - k)
}

// hex is "%0*x" % random.getrandbits(4*digits) for a multiple of 32 bits:
// CPython fills the number from its least significant word up.
func (r *pyRandom) hex(words int) string {
	ws := make([]uint32, words)
	for i := range ws {
		ws[i] = r.uint32()
	}
	s := ""
	for i := words - 1; i >= 0; i-- {
		s += fmt.Sprintf("%08x", ws[i])
	}
	return s
}

// below is random._randbelow(n): getrandbits of n's bit length until the
// draw is below n.
func (r *pyRandom) below(n int) int {
	k := bits.Len(uint(n))
	for {
		if v := int(r.bits(k)); v < n {
			return v
		}
	}
}

// sampleSet is the set random.sample(range(n), k) returns for a population
// too large for CPython's pool method (n > 21 when k <= 5).
func (r *pyRandom) sampleSet(n, k int) map[int]bool {
	selected := map[int]bool{}
	for range k {
		j := r.below(n)
		for selected[j] {
			j = r.below(n)
		}
		selected[j] = true
	}
	return selected
}

// expovariate is random.expovariate(lambd) as CPython 3.11 computes it.
func (r *pyRandom) expovariate(lambd float64) float64 {
	return -math.Log(1.0-r.random()) / lambd
}
