#!/bin/sh
# The differential fuzzer's driver: runs tests/fuzz/fuzz_run over a range of
# seeds twice, in parallel -- plainly on the CPU simulator and with
# LD_PRELOAD=libgraphshim.so -- compares the per-program digests, shrinks
# the first diverging seeds (fuzz_run --shrink) and checks that graphshim
# really replayed (GRAPHSHIM_STATS): a sample in which less than
# FUZZ_MIN_REPLAY percent of launches were replayed proves nothing and fails
# (counted over the batches that may replay: not the one whose gate sends
# everything eagerly, GRAPHSHIM_GATE=eager, which replays nothing by design).
#
# The seeds are split into batches; each batch runs under one of the
# settings below (graphshim reads its settings once per process).
#
#   fuzz.sh [--first S] [--count N] [--batch B] [--long N] [--time SECONDS]
#     --first S    first seed (default $FUZZ_SEED or 1)
#     --count N    programs (default 3000); --long N is the same, for long runs
#     --batch B    programs per batch (default count/6, at least 1)
#     --time T     stop starting batches after T seconds
#     --no-shrink  report diverging seeds without shrinking them
#     --stop       stop after the first diverging batch
#   Environment: top_builddir (default .), FUZZ_KDELAY_BATCHES (every Nth
#   batch runs kernels with FUZZ_KDELAY=20 to shuffle stream timing; default
#   3), FUZZ_MWAIT (1, the default: spins poll memory a kernel writes first,
#   and in half the programs that poll is the whole spin; 2: it is in all;
#   0: they do not poll), FUZZ_MIN_REPLAY (default 20), FUZZ_SHRINK_MAX (seeds shrunk, default 2),
#   FUZZ_EXTRA (VAR=value words after every batch's settings, which they
#   override: e.g. GRAPHSHIM_IDLE_US=2, the idle watchdog looking every
#   microsecond in every batch, as it does relative to a program slowed
#   down tenfold by ThreadSanitizer),
#   FUZZ_SETTING (0-5: every batch in that one of the six settings below,
#   to look for a divergence seen in it with more of its programs; the
#   replay floor is then that setting's alone: setting 5, whose history
#   and sequences are short, replayed 13% of its launches in 100,000
#   programs, so give FUZZ_MIN_REPLAY=10 there),
#   FUZZ_TIMEOUT (seconds per batch and mode, default 600).  FUZZ_RUNNER: the
#   runner in tests/fuzz (default fuzz_run; fuzz_run_hip: the HIP flavour).
# Exit: 0 all digests equal and enough replay, 1 otherwise, 77 not built.
set -u
b=${top_builddir:-.}
run=$b/tests/fuzz/${FUZZ_RUNNER:-fuzz_run}
lib=$(cd "$b" && pwd)/.libs/libgraphshim.so
[ -x "$run" ] && [ -f "$lib" ] || { echo "fuzz: not built ($run, $lib): skipped"; exit 77; }
# A sanitized libgraphshim (configure --enable-sanitizers) needs the
# sanitizer runtimes first in the preload list.
san=$(ldd "$lib" 2>/dev/null | awk '/lib(asan|ubsan|tsan)\.so/ { printf "%s:", $3 }')
preload="${GS_TEST_PRELOAD_PREFIX:+$GS_TEST_PRELOAD_PREFIX }$san$lib"
if [ -n "$san" ]; then
	LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	export LSAN_OPTIONS
fi

first=${FUZZ_SEED:-1}
count=3000
batch=
limit=
shrink=1
stop=0
first_bad=
while [ $# -gt 0 ]; do
	case $1 in
	--first) first=$2; shift ;;
	--count|--long) count=$2; shift ;;
	--batch) batch=$2; shift ;;
	--time) limit=$2; shift ;;
	--no-shrink) shrink=0 ;;
	--stop) stop=1 ;;
	*) echo "usage: fuzz.sh [--first S] [--count N|--long N] [--batch B] [--time SECONDS] [--no-shrink]" >&2
	   exit 2 ;;
	esac
	shift
done
[ -n "$batch" ] || batch=$(( count / 6 > 0 ? count / 6 : 1 ))
kdelay_every=${FUZZ_KDELAY_BATCHES:-3}
# Spins on a stream first poll memory a kernel writes (fuzz_run.c, mem_wait):
# held launches there reach the GPU by graphshim's idle watchdog alone.
FUZZ_MWAIT=${FUZZ_MWAIT-1}
export FUZZ_MWAIT
min_replay=${FUZZ_MIN_REPLAY:-20}
case ${FUZZ_SETTING-} in
''|[0-5]) ;;
*) echo "fuzz: FUZZ_SETTING is a setting's number, 0 to 5, not '$FUZZ_SETTING'" >&2; exit 2 ;;
esac
# A lost flush can also hang a program (a stream query that never sees its
# work complete): a batch gets FUZZ_TIMEOUT seconds.
to=
command -v timeout >/dev/null 2>&1 && to="timeout ${FUZZ_TIMEOUT:-600}"
shrink_max=${FUZZ_SHRINK_MAX:-2}

# Settings per batch, in turn.  Short sequences and two sightings make
# loops of 3 to 30 iterations reach replay; the rest varies chunking, patch
# policy, retirement, the background builder and the gate (timed with one
# sample of each kind and re-timed every 4 passes, so that short loops cross
# its trial, decisions and re-checks; forced replay; forced eager, whose
# streams go cold quietly and wake to match again every 3 passes), in two
# batches cooperative launches held as nodes (GRAPHSHIM_COOPERATIVE=1), in
# two streams turn thrifty at their first wasted build and back at their
# next that pays (GRAPHSHIM_THRIFT=1: learning at 4 sightings, speculation
# off and on again, all the time), in all but one streams whose steps
# replay between new segments go cold between passes (GRAPHSHIM_COLD_REPLAY,
# on by default; the batch with GRAPHSHIM_COLD_REPLAY=0 keeps them warm), and
# cold streams (after 1 or 2 new segments, so that streams go cold and warm
# again all the time; with period detection from the 3rd launch, the 40th,
# or never, which decides how long a cold segment may last).  One batch of
# background builds has the simulator take 100 us an instantiation, as a GPU
# does, so that programs end and unload their module while a build runs.  In
# one batch the simulator refuses copy and memset nodes (GS_SIM_REFUSE_NODES),
# as a driver refuses what its graphs cannot hold: those records run eagerly
# at their place in steps whose other launches replay; in another, memset
# nodes are refused when their graph is instantiated (GS_SIM_REFUSE_AT); in
# both, kernel nodes with the cooperative attribute (`coop`: a refused
# kernel's other launches are refused with it, and in sequences learned
# later before their first build); in
# a third every 61st node update fails (the launch goes eager from then on).
# In three batches the idle watchdog looks every 10 us (GRAPHSHIM_IDLE_US=20):
# it submits a stream's held launches whenever 10-20 us pass without the
# stream holding another (another stream's calls, a host function, a
# kernel delay), at places no program chooses; in one of them two replayed
# passes in a row that waited for it send a sequence eagerly until its
# re-check (GRAPHSHIM_IDLE_EAGER=2), and in another a single replayed pass
# that waited at a place cuts a chunk there (GRAPHSHIM_IDLE_CUT=1: cuts
# and the lone launches between them, planned again, as often as can be).
# Three batches absorb event records and waits into chunks on every stream
# (GRAPHSHIM_ABSORB, off by default), two of them adopting side streams
# into the stream they fork from as well (GRAPHSHIM_ADOPT, on by default
# since the thirtieth session: a stream adopted into absorbs alone); two
# more adopt as the defaults do, and two never adopt (GRAPHSHIM_ADOPT=0).
# FUZZ_ADOPT=0: no batch adopts.  Adoption was out of make check's sample
# while it diverged (about once in 16,000 adopting programs, then 7
# batches in 48 with the crossing flag cleared: docs/limits.md); back since
# the held-event table's bugs were fixed and 200,000 adopting programs ran
# without a divergence.
# Three batches plan every sequence as a slow host's (GRAPHSHIM_HOST_BOUND_US=0:
# chunks shrink towards the end, and grow from the front by
# GRAPHSHIM_CHUNK_GROWTH: 1.5 from a first chunk of 1 and of 2, and 1), which
# the simulator's fast launches otherwise never are; in the third a step of
# 4 launches or fewer still ends in a chunk of 2 (GRAPHSHIM_CHUNK_SHORT=1).
# Two batches keep a short history (GRAPHSHIM_MAX_SEQ 24 and 12, one of
# them with no period detection): a segment that reaches it with nothing
# held ends there (a long cut), at places inside the programs' steps.
# Three batches patch and launch chunks on the submission thread
# (GRAPHSHIM_SUBMIT_THREAD=1, off by default), one of them with a thread
# that sleeps after every job (GRAPHSHIM_SUBMIT_SPIN_US=0), one with the
# sim refusing every 61st node update (the thread's refusal path).
# Kernel nodes are patched on the (simulated) GPU (GRAPHSHIM_DEVICE_PATCH,
# on by default since the forty-second session: an updater node at the head
# of each graph whose nodes drift; the HIP runner ignores it) in every batch
# but the first, which patches from the host only, as where the updater will
# not load; one with the sim refusing every 61st host update.
# GRAPHSHIM_CHECK_ORDER: a record submitted out of its stream's order or
# twice aborts the run (a divergence) even where the digests come out equal.
# One batch in six (the one whose gate times its passes most) also times
# graphshim's own host work (GRAPHSHIM_SELFTIME), as users diagnosing it do;
# in another the gate's eager passes count less graphshim's own time in them
# (GRAPHSHIM_GATE_LESS_OWN=1: their launch calls timed for the gate alone),
# and in a third its trials go in blocks timed by periods (GRAPHSHIM_GATE_BLOCK=3,
# GRAPHSHIM_GATE_PERIOD=1: timers stopped again at the next pass's first launch).
# Four batches learn steps of a few operations at their first sighting
# (GRAPHSHIM_LEARN_LONG 3-8: the programs' steps are short; 32 by default),
# one of them building on the builder's thread; two learn every step at its
# GRAPHSHIM_LEARN_REPS-th sighting (0), so that speculation keeps its cover.
# Two, one building on the application's thread and one on the builder's,
# learn a step first seen as a variant of an armed one at once
# (GRAPHSHIM_SIBLINGS=1, off by default: mostly what GRAPHSHIM_LEARN_LONG
# learns first).
common="GRAPHSHIM_LEARN_REPS=2 GRAPHSHIM_MIN_SEQ=2 GRAPHSHIM_LOG=error GRAPHSHIM_CHECK_ORDER=1 GRAPHSHIM_ADOPT_GRACE_US=0"
# Period detection from a segment's 3rd launch (programs are short), except
# in the batches that set a later start, fed from the history when it comes.
per_after="GRAPHSHIM_PERIOD_AFTER=3"
adopt=" GRAPHSHIM_ADOPT=1" noadopt=" GRAPHSHIM_ADOPT=0" dflt=""
[ "${FUZZ_ADOPT:-1}" = 1 ] || adopt=$noadopt dflt=$noadopt
settings() {
	case $(( $1 % 6 )) in
	0) echo "GRAPHSHIM_LEARN_LONG=3 GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_CHUNK_FIRST=1 GRAPHSHIM_SUBMIT_THREAD=1 GRAPHSHIM_GATE_AFTER=1 GRAPHSHIM_GATE_SAMPLES=1 GRAPHSHIM_GATE_RECHECK=4 GRAPHSHIM_COLD_AFTER=1 GRAPHSHIM_IDLE_US=20 GRAPHSHIM_IDLE_CUT=1 GRAPHSHIM_ABSORB=1 GRAPHSHIM_HOST_BOUND_US=0 GRAPHSHIM_DEVICE_PATCH=0 GRAPHSHIM_GATE_LESS_OWN=1$adopt" ;;
	1) echo "GRAPHSHIM_LEARN_LONG=6 GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_CHUNK_FIRST=2 GRAPHSHIM_SUBMIT_THREAD=1 GRAPHSHIM_SUBMIT_SPIN_US=0 GRAPHSHIM_MISMATCH_LIMIT=1 GRAPHSHIM_COOLDOWN=1 GRAPHSHIM_GATE=replay GS_SIM_REFUSE_NODES=copy,memset,coop GRAPHSHIM_HOST_BOUND_US=0 GRAPHSHIM_DEVICE_PATCH=1 GRAPHSHIM_COOPERATIVE=1$dflt" ;;
	2) echo "GRAPHSHIM_LEARN_LONG=4 GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_CHUNK_FIRST=4 GRAPHSHIM_PATCH_COST=0 GRAPHSHIM_GRAPH_COST=0 GRAPHSHIM_GATE=eager GRAPHSHIM_GATE_RECHECK=3 GRAPHSHIM_MAX_SEQ=24$noadopt" ;;
	3) echo "GRAPHSHIM_LEARN_LONG=0 GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_CHUNK_FIRST=8 GRAPHSHIM_PATCH_COST=5 GRAPHSHIM_MISMATCH_LIMIT=8 GRAPHSHIM_CHUNK_MAX=8 GRAPHSHIM_GATE_AFTER=2 GRAPHSHIM_GATE_TRUST=8 GRAPHSHIM_GATE_RECHECK=6 GRAPHSHIM_PERIOD_AFTER=40 GRAPHSHIM_COLD_AFTER=2 GRAPHSHIM_IDLE_US=20 GRAPHSHIM_IDLE_EAGER=2 GRAPHSHIM_DEVICE_PATCH=1 GRAPHSHIM_SELFTIME=1 GRAPHSHIM_GATE_PERIOD=1 GRAPHSHIM_GATE_BLOCK=3 GRAPHSHIM_SIBLINGS=1$adopt" ;;
	4) echo "GRAPHSHIM_LEARN_LONG=8 GRAPHSHIM_ASYNC_BUILD=1 GRAPHSHIM_CHUNK_FIRST=4 GRAPHSHIM_CHUNK_LAST=2 GRAPHSHIM_CHUNK_SHORT=1 GRAPHSHIM_COOLDOWN=1 GRAPHSHIM_FORGIVE=0 GRAPHSHIM_COLD_AFTER=2 GRAPHSHIM_SHARE=0 GS_SIM_INSTANTIATE_US=100 GS_SIM_REFUSE_NODES=memset,coop GS_SIM_REFUSE_AT=instantiate GRAPHSHIM_HOST_BOUND_US=0 GRAPHSHIM_CHUNK_GROWTH=1 GRAPHSHIM_DEVICE_PATCH=1 GRAPHSHIM_COOPERATIVE=1 GRAPHSHIM_THRIFT=1 GRAPHSHIM_SIBLINGS=1$dflt" ;;
	5) echo "GRAPHSHIM_LEARN_LONG=0 GRAPHSHIM_ASYNC_BUILD=1 GRAPHSHIM_CHUNK_FIRST=6 GRAPHSHIM_SUBMIT_THREAD=1 GRAPHSHIM_PERIOD=0 GRAPHSHIM_MAX_SEQ=12 GRAPHSHIM_MAX_SEQS=4 GRAPHSHIM_MISMATCH_LIMIT=2 GRAPHSHIM_COLD_AFTER=1 GS_SIM_FAIL_NODE_PATCH=61* GRAPHSHIM_IDLE_US=20 GS_SIM_GRAPH_CREATE_US=20 GRAPHSHIM_ABSORB=1 GRAPHSHIM_DEVICE_PATCH=1 GRAPHSHIM_THRIFT=1 GRAPHSHIM_COLD_REPLAY=0$noadopt" ;;
	esac
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
# A counter from a statistics file; nothing when the run died before writing it.
counter() { [ -f "$2" ] && sed -n "s/.*\"$1\": \([0-9][0-9]*\).*/\1/p" "$2" | head -n 1; }
# The first lines of a run's errors, and a sanitizer's report with its stacks.
errors() {
	awk 'NR <= 5 && !/^fuzz_run: [0-9]* programs/ { print "  " $0 }
		/^==[0-9]+==ERROR|^WARNING: ThreadSanitizer|^fuzz_run: signal [0-9]+/ { on = 1 }
		/^Shadow bytes/ { on = 0 }
		NR > 5 && on && n < 60 { print "  " $0; n++ }' "$1"
}

# A digest that differs: rerun the batch FUZZ_RERUNS times on each side (2).
# Where every rerun of both sides gives each diverging seed the graphshim
# run's digest and only the first plain run's differed, the run without
# graphshim is what was not deterministic (forty-second session: about one
# program in 175,000, setting 3, with and without device patches): said
# loudly, not counted as graphshim's.  Anything else is a divergence.
plain_odd() {
	reruns=${FUZZ_RERUNS:-2}
	[ "$reruns" -gt 0 ] || return 1
	odd=$(awk 'NR == FNR { a[$1] = $2; next } ($1 in a) && a[$1] != $2 { print $1 }' "$tmp/plain" "$tmp/shim")
	[ -n "$odd" ] || return 1
	k=0
	while [ $k -lt "$reruns" ]; do
		FUZZ_KDELAY=$1 $to "$run" -s "$3" "$4" >"$tmp/plain.re" 2>/dev/null || return 1
		env FUZZ_KDELAY=$1 $common $per_after $2 GRAPHSHIM_STATS="$tmp/stats.re.json" LD_PRELOAD="$preload" \
			$to "$run" -s "$3" "$4" >"$tmp/shim.re" 2>/dev/null || return 1
		for d in $odd; do
			want=$(awk -v x="$d" '$1 == x { print $2 }' "$tmp/shim")
			for f in "$tmp/plain.re" "$tmp/shim.re"; do
				[ "$(awk -v x="$d" '$1 == x { print $2 }' "$f")" = "$want" ] || return 1
			done
		done
		k=$(( k + 1 ))
	done
	echo "fuzz: WARNING: seeds $(echo $odd | cut -c1-120): the run without graphshim gave another digest once," \
		"and $reruns reruns of each side all gave graphshim's: the plain run is what was not deterministic"
	return 0
}

start=$(date +%s.%N)
t_launch=0 t_rlaunch=0 t_replay=0 t_patch=0 t_var=0 t_vrep=0 t_mis=0 t_flush=0 t_gated=0 t_gdec=0 t_cold=0 t_coldn=0 t_quiet=0 t_quietp=0 t_want=0 t_spec=0 t_miss=0 t_sib=0 t_long=0 t_int=0 t_qnr=0 t_cut=0 t_ie=0 t_sh=0 t_si=0 t_ad=0 t_fh=0 t_tr=0 t_dp=0 t_rg=0 t_odd=0 may_adopt=0 done_n=0 bad=0 shrunk=0 i=0
s=$first
end=$(( first + count ))
while [ "$s" -lt "$end" ]; do
	if [ -n "$limit" ] && [ "$(awk "BEGIN { print ($(date +%s.%N) - $start >= $limit) }")" = 1 ]; then
		echo "fuzz: time limit reached"
		break
	fi
	n=$(( end - s < batch ? end - s : batch ))
	# The batch's settings, then FUZZ_EXTRA's over them.
	base_i=$(settings "${FUZZ_SETTING:-$i}")
	set_i="$base_i${FUZZ_EXTRA:+ $FUZZ_EXTRA}"
	kd=0
	[ "$kdelay_every" -gt 0 ] && [ $(( i % kdelay_every )) -eq $(( kdelay_every - 1 )) ] && kd=20
	t0=$(date +%s.%N)
	el0=$(awk "BEGIN { print $t0 - $start }")
	FUZZ_KDELAY=$kd $to "$run" -s "$s" "$n" >"$tmp/plain" 2>"$tmp/plain.err" &
	pid=$!
	env FUZZ_KDELAY=$kd $common $per_after $set_i GRAPHSHIM_STATS="$tmp/stats.$i.json" LD_PRELOAD="$preload" \
		$to "$run" -s "$s" "$n" >"$tmp/shim" 2>"$tmp/shim.err"
	rc_s=$?
	wait $pid
	rc_p=$?
	t1=$(date +%s.%N)
	st=$tmp/stats.$i.json
	l=$(counter launches "$st"); r=$(counter replayed "$st"); p=$(counter patches "$st")
	m=$(counter mismatches "$st"); f=$(counter flushes "$st")
	vb=$(counter variants "$st"); vr=$(counter variant_replays "$st")
	t_var=$(( t_var + ${vb:-0} )) t_vrep=$(( t_vrep + ${vr:-0} ))
	g=$(counter gated "$st"); gd=$(counter gate_decisions "$st")
	t_gated=$(( t_gated + ${g:-0} )) t_gdec=$(( t_gdec + ${gd:-0} ))
	cp=$(counter cold_passed "$st"); cs=$(counter cold_streams "$st")
	t_cold=$(( t_cold + ${cp:-0} )) t_coldn=$(( t_coldn + ${cs:-0} ))
	qu=$(counter cold_quiet "$st"); t_quiet=$(( t_quiet + ${qu:-0} ))
	it=$(counter cold_quiet_passed "$st"); t_quietp=$(( t_quietp + ${it:-0} ))
	cw=$(counter cold_wanted "$st"); t_want=$(( t_want + ${cw:-0} ))
	it=$(counter speculated "$st"); t_spec=$(( t_spec + ${it:-0} ))
	it=$(counter guesses_missed "$st"); t_miss=$(( t_miss + ${it:-0} ))
	it=$(counter siblings "$st"); t_sib=$(( t_sib + ${it:-0} ))
	it=$(counter learned_long "$st"); t_long=$(( t_long + ${it:-0} ))
	it=$(counter interrupted "$st"); t_int=$(( t_int + ${it:-0} ))
	qn=$(counter query_not_ready "$st"); t_qnr=$(( t_qnr + ${qn:-0} ))
	it=$(counter idle_cuts "$st"); t_cut=$(( t_cut + ${it:-0} ))
	it=$(counter idle_eager "$st"); t_ie=$(( t_ie + ${it:-0} ))
	it=$(counter shared_chunks "$st"); t_sh=$(( t_sh + ${it:-0} ))
	it=$(counter stand_ins "$st"); t_si=$(( t_si + ${it:-0} ))
	it=$(counter adopted "$st"); t_ad=$(( t_ad + ${it:-0} ))
	it=$(counter frees_held "$st"); t_fh=$(( t_fh + ${it:-0} ))
	it=$(counter gate_trusted "$st"); t_tr=$(( t_tr + ${it:-0} ))
	it=$(counter device_patched "$st"); t_dp=$(( t_dp + ${it:-0} ))
	it=$(counter drift_rebuilds "$st"); t_rg=$(( t_rg + ${it:-0} ))
	t_launch=$(( t_launch + ${l:-0} )) t_replay=$(( t_replay + ${r:-0} ))
	case " $base_i " in *" GRAPHSHIM_GATE=eager "*) ;; *) t_rlaunch=$(( t_rlaunch + ${l:-0} )) ;; esac
	case " $set_i " in *" GRAPHSHIM_ADOPT=0 "*) ;; *) may_adopt=1 ;; esac
	t_patch=$(( t_patch + ${p:-0} )) t_mis=$(( t_mis + ${m:-0} )) t_flush=$(( t_flush + ${f:-0} ))
	verdict=ok
	if [ $rc_p -ne 0 ] || [ $rc_s -ne 0 ] || ! cmp -s "$tmp/plain" "$tmp/shim"; then
		verdict=DIVERGED
		if [ $rc_p -eq 0 ] && [ $rc_s -eq 0 ] && plain_odd "$kd" "$set_i" "$s" "$n"; then
			verdict="ok (the plain run was the odd one)"
			t_odd=$(( t_odd + 1 ))
		else
			bad=$(( bad + 1 ))
		fi
	fi
	printf 'fuzz: batch %d seeds %d..%d (%s%s): %.1f s, launches %s replayed %s patches %s variants %s (replays %s) mismatches %s flushes %s quiet %s: %s\n' \
		"$i" "$s" $(( s + n - 1 )) "$set_i" "$( [ $kd -gt 0 ] && echo " FUZZ_KDELAY=$kd")" \
		"$(awk "BEGIN { print $t1 - $t0 }")" "${l:-?}" "${r:-?}" "${p:-?}" "${vb:-?}" "${vr:-?}" "${m:-?}" "${f:-?}" "${qu:-?}" "$verdict"
	if [ "$verdict" = DIVERGED ]; then
		echo "fuzz: exit status plain $rc_p, graphshim $rc_s"
		errors "$tmp/plain.err"
		errors "$tmp/shim.err"
		# Diverging seeds: a different digest, or missing from one side.
		diffs=$(awk 'NR == FNR { a[$1] = $2; next }
			a[$1] != $2 { print $1 } { delete a[$1] }
			END { for (k in a) print k }' "$tmp/plain" "$tmp/shim" | sort -n)
		[ -n "$diffs" ] || diffs=$(tail -n 1 "$tmp/plain" | cut -d' ' -f1)
		echo "fuzz: diverging seeds: $(echo $diffs | cut -c1-200)"
		if [ -z "$first_bad" ]; then
			d1=$(echo $diffs | cut -d' ' -f1)
			first_bad="seed $d1, program $(( d1 - first + 1 )) of the run, about $(awk "BEGIN { printf \"%.1f\", $el0 + ($d1 - $s + 1) / $n * ($t1 - $t0) }") s in"
			echo "fuzz: first divergence: $first_bad"
		fi
		for d in $diffs; do
			[ $shrink -eq 1 ] && [ $shrunk -lt "$shrink_max" ] || break
			shrunk=$(( shrunk + 1 ))
			echo "fuzz: shrinking seed $d ($set_i)"
			env FUZZ_KDELAY=$kd $common $per_after $set_i FUZZ_SHIM="$preload" "$run" --shrink "$d" ||
			env FUZZ_KDELAY=$kd $common $per_after $set_i FUZZ_SHIM="$preload" "$run" --shrink --pre $(( d - s > 40 ? 40 : d - s )) "$d"
		done
	fi
	done_n=$(( done_n + n ))
	s=$(( s + n ))
	i=$(( i + 1 ))
	[ $stop -eq 1 ] && [ $bad -gt 0 ] && break
done
secs=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
pct=0
[ "$t_launch" -gt 0 ] && pct=$(( 100 * t_replay / t_launch ))
# The floor's share: of the launches in batches that may replay.
rpct=0
[ "$t_rlaunch" -gt 0 ] && rpct=$(( 100 * t_replay / t_rlaunch ))
echo "fuzz: $done_n programs in $secs s; graphshim launches $t_launch, replayed $t_replay ($pct%; $rpct% of the batches that may replay), patches $t_patch, variants $t_var (replays $t_vrep), mismatches $t_mis, flushes $t_flush, gate decisions $t_gdec, launches sent eagerly by the gate $t_gated, streams gone cold $t_coldn (quietly, their steps kept eager: $t_quiet), launches passed cold $t_cold (quietly: $t_quietp), cold streams woken where a repeated segment began $t_want, speculative builds $t_spec (guesses missed $t_miss), steps learned at their first sighting as variants of an armed one $t_sib, for their length $t_long, matches that outlived another thread's flush $t_int, another thread's stream queries answered not ready $t_qnr, chunks cut where a program waited $t_cut, sequences sent eager by idle waits $t_ie, chunks shared by alike steps $t_sh, nodes made on stand-ins $t_si, side streams adopted $t_ad, frees held $t_fh, sequences trusted by the gate $t_tr, words patched on the GPU $t_dp, sequences built again for their drift $t_rg; batches whose plain run was the odd one $t_odd; diverging batches $bad"
if [ $bad -gt 0 ]; then
	echo "fuzz: FAIL: graphshim changed results"
	exit 1
fi
if [ "$rpct" -lt "$min_replay" ]; then
	echo "fuzz: FAIL: only $rpct% of the launches of batches that may replay were replayed (< $min_replay%): the sample does not exercise graphshim"
	exit 1
fi
# Steps that begin alike (shared chunks) come up thousands of times in
# 6000 programs: none in a sample that size means the generator no longer
# makes them, and the sample no longer tests that path.
if [ "$done_n" -ge 3000 ] && [ "$t_sh" -eq 0 ]; then
	echo "fuzz: FAIL: no chunk was shared by alike steps in $done_n programs: the sample does not exercise that path"
	exit 1
fi
# Likewise side streams adopted (a hundred or more in 1000 programs of an
# adopting setting, on either runner): none means adoption no longer happens.
# Only where a batch may adopt (not with FUZZ_ADOPT=0, nor FUZZ_SETTING of
# a setting that never adopts).
if [ "$done_n" -ge 3000 ] && [ "$may_adopt" = 1 ] && [ "$t_ad" -eq 0 ]; then
	echo "fuzz: FAIL: no side stream was adopted in $done_n programs: the sample does not exercise adoption"
	exit 1
fi
# And stream-ordered frees held with their chunks (AREALLOC in loops: some
# thousands in 3000 programs): none means frees go at their call again.
if [ "$done_n" -ge 3000 ] && [ "$t_fh" -eq 0 ]; then
	echo "fuzz: FAIL: no stream-ordered free was held in $done_n programs: the sample does not exercise held frees"
	exit 1
fi
exit 0
