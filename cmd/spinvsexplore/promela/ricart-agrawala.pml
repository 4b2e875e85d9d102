/*
 * Ricart-Agrawala as the playground runs it (algorithms/ricartagrawala), written in
 * Promela for SPIN, to put the explorer (`playground explore`) and SPIN on the same
 * question: N processes, each asks for the CS once at the start, one FIFO channel per
 * ordered pair of processes, any message in flight may arrive next, a process in the
 * CS may leave it at any moment. Is mutual exclusion kept (the assert) and can no
 * process be left waiting for ever with nothing left to happen (SPIN's invalid end
 * states)?
 *
 *   spin -DN=4 -a ricart-agrawala.pml && cc -O2 -DSAFETY -o pan pan.c && ./pan -m100000
 *
 * N is 2 to 8 (default 4). cmd/spinvsexplore runs this beside the explorer.
 *
 * Faithful to the Go code, step for step:
 *  - the Lamport clock: a request takes clock+1 as its timestamp; every delivery sets
 *    clock := max(clock, the message's ts) + 1; every REPLY carries clock+1;
 *  - ids are 0..N-1, and (T, i) < (Tj, j) breaks ties on ids;
 *  - deferred requests are answered in the order they came (the order decides which
 *    REPLY carries which timestamp);
 *  - a REPLY is counted once and only while REQUESTED;
 *  - each handler is one indivisible step (d_step), like one Step call of the kernel;
 *  - the requests of time 0 are made in the order of the ids and before any message
 *    arrives, as the explorer runs events at time 0 (docs/explorer.md): process i
 *    asks when asked = i, and every receive waits for asked = N.
 * So SPIN's states are the explorer's, one for one, plus the N + 2 before the last
 * request of time 0 (cmd/spinvsexplore's test checks it for N = 2 and 3).
 * The node's state is kept in local variables and each channel has one reader and
 * one writer, so that SPIN's partial-order reduction may take a handler as touching
 * only its own process (it finds little to reduce all the same: docs/benchmarks.md).
 *
 * An abstraction, sound for this question only:
 *   -DFROZEN_CLOCK    the clock stops after the request (below).
 * Variants that are wrong on purpose, to see the violation found:
 *   -DNO_TIEBREAK     compare timestamps only: equal timestamps (every process asks
 *                     at clock 1 here) make both answer, and both enter the CS.
 *   -DFORGET_DEFERRED leave the CS without answering the queued requests: the
 *                     processes they came from wait for ever (an invalid end state).
 */

#ifndef N
#define N 4
#endif

mtype = { REQUEST, REPLY };
mtype = { RELEASED, REQUESTED, HELD };

/* c[CH(j, i)] carries j's messages to i, in the order sent. Each pair carries at most
 * one REQUEST and one REPLY. c[CH(i, i)] is never written: i's receive branch for
 * j = i reads it, and so never fires. */
#define CH(from, to) ((from) * N + (to))
chan c[N * N] = [2] of { mtype, byte };

byte asked;  /* processes that have made their request at time 0 */
byte incs;   /* processes in the CS */

/* The Lamport clock, except with -DFROZEN_CLOCK: the clock then stops after the
 * request. Sound for this question only (each process asks once, at the start, so no
 * later timestamp is ever compared); it shows what the clock costs in states. */
#ifdef FROZEN_CLOCK
#define TICK_ON_DELIVERY skip
#define TICK skip
#else
#define TICK_ON_DELIVERY clock = (clock > t -> clock : t) + 1
#define TICK clock++
#endif

/* (ts, i) < (t, j): this process's request is older than j's. */
#ifdef NO_TIEBREAK
#define OLDER(j, t) (ts < (t))
#else
#define OLDER(j, t) (ts < (t) || (ts == (t) && i < (j)))
#endif

/* One step: deliver the oldest message from j (RH1 for a REQUEST, RA3 and maybe RE1
 * for a REPLY). */
#define RECEIVE(j)                                                           \
	:: d_step {                                                          \
		asked == N && nempty(in##j) -> in##j?m, t;                   \
		TICK_ON_DELIVERY;                                            \
		if                                                           \
		:: m == REQUEST ->                                           \
			if /* RH1 */                                         \
			:: state == HELD || (state == REQUESTED && OLDER(j, t)) -> \
				dq[nd] = j; nd++                             \
			:: else ->                                           \
				TICK; out##j!REPLY, clock                    \
			fi                                                   \
		:: m == REPLY && state == REQUESTED && !(replied & (1 << (j))) -> \
			replied = replied | (1 << (j)); replies++; /* RA3 */  \
			if                                                   \
			:: replies == N - 1 -> /* RE1 */                     \
				state = HELD; incs++; assert(incs <= 1)      \
			:: else -> skip                                      \
			fi                                                   \
		:: else -> skip /* a REPLY not waited for */                 \
		fi;                                                          \
		m = 0; t = 0                                                 \
	}

/* Every process's receive branches and channel declarations, one per process (N is 2
 * to 8): i reads only c[CH(j, i)] and writes only c[CH(i, j)]. */
#if N < 2 || N > 8
#error N is 2 to 8
#endif
#define X(j) chan in##j = c[CH(j, i)], out##j = c[CH(i, j)]; xr in##j; xs out##j;
#if N > 2
#define R2 RECEIVE(2)
#define X2 X(2)
#else
#define R2
#define X2
#endif
#if N > 3
#define R3 RECEIVE(3)
#define X3 X(3)
#else
#define R3
#define X3
#endif
#if N > 4
#define R4 RECEIVE(4)
#define X4 X(4)
#else
#define R4
#define X4
#endif
#if N > 5
#define R5 RECEIVE(5)
#define X5 X(5)
#else
#define R5
#define X5
#endif
#if N > 6
#define R6 RECEIVE(6)
#define X6 X(6)
#else
#define R6
#define X6
#endif
#if N > 7
#define R7 RECEIVE(7)
#define X7 X(7)
#else
#define R7
#define X7
#endif
#define RECEIVES RECEIVE(0) RECEIVE(1) R2 R3 R4 R5 R6 R7
#define EXCLUSIVE X(0) X(1) X2 X3 X4 X5 X6 X7

proctype Node(byte i) {
	mtype state = RELEASED;  /* RI1 */
	byte clock, ts, replies, nd, k, t;
	byte replied;            /* bit j: j has replied to the current request */
	byte dq[N];              /* deferred requests, in arrival order (dq[0..nd-1]) */
	mtype m;
	EXCLUSIVE

	d_step { /* RA1, RA2, at time 0, in the order of the ids */
		asked == i ->
		state = REQUESTED; clock++; ts = clock;
		for (k : 0 .. N - 1) {
			if
			:: k != i -> c[CH(i, k)]!REQUEST, ts
			:: else -> skip
			fi
		}
		k = 0;
		asked++
	}

	do
	RECEIVES
	:: d_step { /* RR1: leave the CS, at any moment */
		state == HELD ->
		state = RELEASED; ts = 0; replied = 0; replies = 0; incs--;
#ifndef FORGET_DEFERRED
		for (k : 0 .. nd - 1) {
			TICK; c[CH(i, dq[k])]!REPLY, clock;
			dq[k] = 0
		}
#endif
		nd = 0; k = 0
	   };
	   break
	od;

	/* Each process asks once: done, it still answers whatever comes, and may stop
	 * here for good (a valid end state). Waiting in the loop above is not. */
end:	do
	RECEIVES
	od
}

init {
	assert(N >= 2 && N <= 8);
	atomic {
		byte p;
		for (p : 0 .. N - 1) {
			run Node(p)
		}
	}
}
