/*
 * guard.h - the process that ends the command's whole tree when gprof-dl
 * dies, however it dies (SIGKILL, the OOM killer, a CI timeout).
 *
 * PR_SET_PDEATHSIG in the command's process ends that process only: the
 * ranks a launcher script or torchrun started, a Python parent's forked
 * children, a daemon that left its parent, ran on, holding their GPUs.
 * So gprof-dl forks a guard, and the guard forks the command:
 *
 *   gprof-dl ── guard (subreaper) ── command ── ranks, workers, ...
 *
 * The guard is the subreaper of the command's tree: every process of it
 * that loses its parent (a daemon's double fork included) becomes the
 * guard's child, so the tree is the guard's descendants, found in /proc.
 * It reads a pipe whose write end only gprof-dl holds: at its end of file
 * without a word before, gprof-dl is gone, and the guard sends SIGKILL to
 * each of its descendants (through a pidfd checked against the start time
 * it saw, so that no reused pid is hit) until none is left, then exits.
 * The command's process also dies with the guard (PR_SET_PDEATHSIG), so
 * that killing the guard alone does not leave it orphaned.
 *
 * The guard reaps the tree's processes that end as its children and tells
 * gprof-dl each one's pid, status and usage, as wait4 would have (gprof-dl
 * stays a subreaper too: should the guard die, the tree's orphans come to
 * it). It changes nothing the command sees but its parent's pid: the
 * command gets gprof-dl's signal dispositions, mask, descriptors and
 * environment; the guard ignores the signals a terminal or a process
 * group sends (gprof-dl forwards them to the command as before), and holds
 * none of gprof-dl's descriptors but its two pipes, so that a pipe on the
 * command's output ends when the command's writers do.
 *
 * At the end gprof-dl releases it (guard_release()): the processes the
 * command left running run on, as without a guard.
 */
#ifndef GPDL_RECORDER_GUARD_H
#define GPDL_RECORDER_GUARD_H

#include <sys/resource.h>
#include <sys/types.h>

struct guard;

/* Forks the guard, which forks the command's process; that process runs
 * child(ctx), which must not return (it execs or _exits), with every
 * descriptor gprof-dl had (the guard closes them in itself). NULL, with
 * errno, when a fork or a pipe failed; else the guard, the command's pid in
 * *pid. */
struct guard *guard_start(void (*child)(void *ctx), void *ctx, pid_t *pid);

/* A process of the tree that ended, as wait4(-1, ..., WNOHANG) would give
 * it: 1 with *pid, *status, *usage; 0 when none has, now (wait_ms > 0:
 * none within about wait_ms milliseconds); -1 when none is left to tell
 * (the guard gone and gprof-dl without children). g NULL (no guard:
 * --keep-target): gprof-dl's own children, by wait4. */
int guard_reaped(struct guard *g, pid_t *pid, int *status, struct rusage *usage, int wait_ms);

/* The guard's pid (gprof-dl's child), which is no process of the tree. */
pid_t guard_pid(const struct guard *g);

/* Lets the guard go without ending the tree, waits for it, frees g. */
void guard_release(struct guard *g);

#endif
