/* Startup probe: spawns `<bin> acp <spec>` N times, writes an `initialize` request on its
 * stdin at once, and measures the time from just before fork() to the arrival of the full
 * response line on its stdout, plus VmRSS from /proc/<pid>/status right after that line.
 * With a fifth argument "rpc" it spawns `<bin> --mode rpc --agent <spec>` instead, writes a
 * `get_state` command, and waits for its response line (the `ready` frame before it is read
 * and skipped).
 * Prints one line per run: "<microseconds> <rss_kib> <child_cpu_microseconds>" (the last is
 * user+sys CPU of the whole child life, from wait4, including its exit after stdin EOF). Usage: startup_probe N BIN SPEC
 * With SPEC "-" BIN is run without arguments (e.g. /bin/cat, which echoes the request: the
 * floor of what a process spawn + pipe round trip costs on this machine). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char kInit[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,"
    "\"clientCapabilities\":{\"fs\":{\"readTextFile\":true,\"writeTextFile\":true},"
    "\"terminal\":true},\"clientInfo\":{\"name\":\"startup-probe\",\"version\":\"1\"}}}\n";

static const char kGetState[] = "{\"id\":\"m-state\",\"type\":\"get_state\"}\n";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static long vm_rss_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s N BIN SPEC [rpc]\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[1]);
  const int rpc = argc == 5 && strcmp(argv[4], "rpc") == 0;
  const char* request = rpc ? kGetState : kInit;
  const size_t request_len = strlen(request);
  /* The line that ends a run: the initialize result, or the get_state response. */
  const char* want = rpc ? "\"command\":\"get_state\"" : "\"protocolVersion\"";
  signal(SIGPIPE, SIG_IGN);
  int devnull = open("/dev/null", O_WRONLY);
  for (int i = 0; i < n; i++) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) return perror("pipe"), 1;
    double t0 = now_us();
    pid_t pid = fork();
    if (pid < 0) return perror("fork"), 1;
    if (pid == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(devnull, 2);
      if (strcmp(argv[3], "-") == 0)
        execl(argv[2], argv[2], (char*)NULL);
      else if (rpc)
        execl(argv[2], argv[2], "--mode", "rpc", "--agent", argv[3], (char*)NULL);
      else
        execl(argv[2], argv[2], "acp", argv[3], (char*)NULL);
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (write(in[1], request, request_len) != (ssize_t)request_len) {
      fprintf(stderr, "run %d: write failed: %s\n", i, strerror(errno));
      return 1;
    }
    char buf[65536];
    size_t len = 0;
    int got_line = 0;
    /* /bin/cat echoes the request: its first line ends the run whatever it holds. */
    const int floor_run = strcmp(argv[3], "-") == 0;
    while (!got_line && len < sizeof buf) {
      ssize_t r = read(out[0], buf + len, sizeof buf - len);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      len += (size_t)r;
      /* Done once a complete line holds the wanted response. */
      char* nl = memrchr(buf, '\n', len);
      if (nl && (floor_run || memmem(buf, (size_t)(nl - buf), want, strlen(want)))) got_line = 1;
    }
    double t1 = now_us();
    long rss = vm_rss_kib(pid);
    if (!got_line || (!floor_run && !memmem(buf, len, want, strlen(want))) ||
        memmem(buf, len, "\"error\"", 7)) {
      fprintf(stderr, "run %d: no %s response; got: %.*s\n", i, rpc ? "get_state" : "initialize",
              (int)len, buf);
      return 1;
    }
    close(in[1]); /* EOF: the agent exits */
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    double cpu_us = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 +
                    ru.ru_stime.tv_usec;
    close(out[0]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "run %d: agent exit status %d\n", i, status);
      return 1;
    }
    printf("%.0f %ld %.0f\n", t1 - t0, rss, cpu_us);
  }
  return 0;
}
