// A stand-in for the pod's pause container as PID 1 of a shared PID namespace (shareProcessNamespace:
// true), for test/kernel/agent-pid1.test.ts. The real one (kubernetes build/pause/linux/pause.c) reaps
// every child on SIGCHLD (sigreap: waitpid(-1, NULL, WNOHANG) in a loop); the container runtime starts the
// app container into its namespace. This one starts the app itself, so the app is not PID 1, and reaps
// every child it has or adopts the same way, by waitpid(-1). It ends with the app, passing on its status.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t app = -1;

static void forward(int signo) {
  if (app > 0) kill(app, signo);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pause-standin PROGRAM [ARG...]\n");
    return 2;
  }
  app = fork();
  if (app < 0) {
    perror("pause-standin: fork");
    return 1;
  }
  if (app == 0) {
    execvp(argv[1], argv + 1);
    perror("pause-standin: exec");
    _exit(127);
  }
  signal(SIGTERM, forward);
  signal(SIGINT, forward);
  for (;;) {
    int status;
    pid_t p = waitpid(-1, &status, 0);
    if (p == app) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (p < 0 && errno != EINTR) return 1;
  }
}
