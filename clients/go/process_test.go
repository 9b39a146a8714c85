package leasehold_test

import (
	"bufio"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"leasehold/internal/testserver"
)

// proc is a helper program run by a test: its stdout lines are collected,
// its stdin held open until closeStdin.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	code  int
}

func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	p.cmd.Stderr = &stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if stderr.Len() > 0 {
			t.Logf("%s stderr: %s", bin, stderr.String())
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *proc) output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

func (p *proc) printed(substr string) bool {
	for _, l := range p.output() {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

func (p *proc) wait(t *testing.T, what string) int {
	t.Helper()
	testserver.Receive(t, p.done, 20*time.Second, what)
	return p.code
}

// FIFO hand-off across processes: leasehold-go-lock holders queue in
// order; closing each one's stdin releases the lock to the next in line,
// and only to it.
func TestFIFOHandOffAcrossProcesses(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 120*time.Second)
	bin := testserver.GoBuild(t, ".", "./cmd/leasehold-go-lock")
	args := []string{"--endpoints", srv.Endpoint(), "--ttl", "10s", "--wait", "forever", "fifo/procs"}
	const n = 4
	procs := make([]*proc, n)
	for i := range procs {
		procs[i] = startProc(t, bin, args...)
		if i == 0 {
			testserver.Require(t, 20*time.Second, "the first holder's token", func() bool { return len(procs[0].output()) == 1 })
			continue
		}
		testserver.Require(t, 20*time.Second, "process queued", func() bool {
			info, err := c.LockInfo(ctx, "fifo/procs")
			return err == nil && info != nil && len(info.Waiters) == i
		})
	}
	var last uint64
	for i := range procs {
		testserver.Require(t, 20*time.Second, "the grant to process "+strconv.Itoa(i), func() bool { return len(procs[i].output()) == 1 })
		token, err := strconv.ParseUint(procs[i].output()[0], 10, 64)
		if err != nil || token <= last {
			t.Fatalf("process %d printed %q after token %d", i, procs[i].output(), last)
		}
		last = token
		for j := i + 1; j < n; j++ {
			if len(procs[j].output()) != 0 {
				t.Fatalf("process %d granted before process %d released", j, i)
			}
		}
		procs[i].stdin.Close()
		if code := procs[i].wait(t, "the holder's exit"); code != 0 {
			t.Fatalf("process %d exited %d", i, code)
		}
	}
	info, err := c.LockInfo(ctx, "fifo/procs")
	if err != nil || (info != nil && len(info.Holders) != 0) {
		t.Fatalf("after the last release: %+v %v", info, err)
	}
}

// The CLI's exit codes: 75 when not acquired within --wait, 76 when the
// lock is lost while held.
func TestLockCLIExitCodes(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 60*time.Second)
	bin := testserver.GoBuild(t, ".", "./cmd/leasehold-go-lock")
	holder := startProc(t, bin, "--endpoints", srv.Endpoint(), "cli")
	testserver.Require(t, 20*time.Second, "the holder's token", func() bool { return len(holder.output()) == 1 })
	busy := startProc(t, bin, "--endpoints", srv.Endpoint(), "--wait", "0", "cli")
	if code := busy.wait(t, "a try-once on a held lock"); code != 75 {
		t.Fatalf("try-once on a held lock exited %d; want 75", code)
	}
	if err := c.Revoke(ctx, "cli"); err != nil {
		t.Fatal(err)
	}
	if code := holder.wait(t, "the revoked holder"); code != 76 {
		t.Fatalf("a revoked holder exited %d; want 76", code)
	}
	usage := startProc(t, bin)
	if code := usage.wait(t, "no NAME"); code != 64 {
		t.Fatalf("no NAME exited %d; want 64", code)
	}
}

// The seeds' billing job (examples/billing): worker A is frozen (SIGSTOP)
// between checking its lease and writing, past its TTL; worker B takes the
// job and writes; A wakes up, writes with its old token, and the fenced
// store refuses it. The ledger keeps B's records.
func TestBillingExampleFencesAPausedWorker(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv, nil)
	ctx := testCtx(t, 120*time.Second)
	bin := testserver.GoBuild(t, ".", "./examples/billing")
	a := startProc(t, bin, "--endpoints", srv.Endpoint(), "--worker", "A", "--ttl", "2s", "--steps", "2", "--gate")
	testserver.Require(t, 20*time.Second, "A ready to write step 1", func() bool { return a.printed("ready to write step 1") })
	io.WriteString(a.stdin, "\n")
	testserver.Require(t, 20*time.Second, "A ready to write step 2", func() bool { return a.printed("ready to write step 2") })
	a.cmd.Process.Signal(syscall.SIGSTOP) // a stop-the-world pause, past the TTL

	b := startProc(t, bin, "--endpoints", srv.Endpoint(), "--worker", "B", "--ttl", "5s", "--steps", "2")
	if code := b.wait(t, "worker B"); code != 0 {
		t.Fatalf("worker B exited %d: %v", code, b.output())
	}
	a.cmd.Process.Signal(syscall.SIGCONT)
	io.WriteString(a.stdin, "\n")
	if code := a.wait(t, "worker A after its pause"); code != 76 || !a.printed("fenced write refused") {
		t.Fatalf("worker A exited %d: %v", code, a.output())
	}
	got, err := c.FencedGet(ctx, "billing/2026-07/ledger")
	if err != nil || got == nil || string(got.Value) != "worker B step 2" {
		t.Fatalf("the ledger holds %+v (%v); want B's last record", got, err)
	}
}
