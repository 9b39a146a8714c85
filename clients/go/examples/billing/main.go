// billing: the seeds' billing job, made safe with a fencing token.
//
// Two workers run the monthly billing job; only one may write the ledger
// at a time. Each takes the lock "jobs/billing/<month>" and writes its
// records through FENCE.PUT with the lock's token, so the store itself
// refuses a worker whose lease ran out while it was paused (a GC pause, a
// SIGSTOP): the seeds' worker A wakes up after worker B took over, tries its
// pending write, and is refused instead of corrupting B's records.
//
// Usage: billing [--endpoints host:port] [--worker A] [--month 2026-07]
//
//	[--steps 3] [--ttl 2s] [--gate]
//
// --gate waits for a line on stdin before each write (after checking the
// lease), so that a test can freeze the worker at exactly that moment.
//
// Exit codes: 0 done; 75 the job is held by another worker past --wait;
// 76 the lease was lost or a write was refused (the worker stopped);
// 69 no server; 1 anything else.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"leasehold"
)

func main() { os.Exit(run()) }

func run() int {
	endpoints := flag.String("endpoints", "127.0.0.1:7379", "leasehold server(s)")
	worker := flag.String("worker", "A", "this worker's name")
	month := flag.String("month", "2026-07", "the billing month")
	steps := flag.Int("steps", 3, "records to write")
	ttl := flag.Duration("ttl", 2*time.Second, "session TTL")
	wait := flag.Duration("wait", 30*time.Second, "how long to wait for the job")
	gate := flag.Bool("gate", false, "wait for a stdin line before each write")
	flag.Parse()

	ctx := context.Background()
	client, err := leasehold.Dial(ctx, *endpoints, nil)
	if err != nil {
		return fail(err)
	}
	defer client.Close()
	session, err := client.NewSession(ctx, *ttl, leasehold.WithOwner("billing worker "+*worker))
	if err != nil {
		return fail(err)
	}
	defer session.Close(ctx)

	job := "jobs/billing/" + *month
	lock, err := session.Lock(ctx, job, &leasehold.LockOptions{Wait: *wait})
	if err != nil {
		return fail(err)
	}
	defer lock.Unlock(ctx)
	fmt.Printf("worker %s holds %s with token %d\n", *worker, job, lock.Token())

	stdin := bufio.NewScanner(os.Stdin)
	ledger := "billing/" + *month + "/ledger"
	for step := 1; step <= *steps; step++ {
		if err := lock.Err(); err != nil {
			fmt.Printf("worker %s stops before step %d: %v\n", *worker, step, err)
			return 76
		}
		if *gate {
			fmt.Printf("worker %s ready to write step %d\n", *worker, step)
			if !stdin.Scan() {
				return 1
			}
		}
		// The resource checks the token: a stale one is refused, whatever
		// this worker believes about its lease.
		record := fmt.Sprintf("worker %s step %d", *worker, step)
		if _, err := lock.Put(ctx, ledger, []byte(record)); err != nil {
			if errors.Is(err, leasehold.ErrStaleToken) {
				fmt.Printf("worker %s: fenced write refused: %v\n", *worker, err)
				return 76
			}
			return fail(err)
		}
		fmt.Printf("worker %s wrote %q\n", *worker, record)
	}
	fmt.Printf("worker %s done\n", *worker)
	return 0
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "billing: %v\n", err)
	switch {
	case errors.Is(err, leasehold.ErrTimedOut), errors.Is(err, leasehold.ErrWouldBlock):
		return 75
	case errors.Is(err, leasehold.ErrLost):
		return 76
	case errors.Is(err, leasehold.ErrUnreachable):
		return 69
	}
	return 1
}
