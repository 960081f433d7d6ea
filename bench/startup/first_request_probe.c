/* First-request probe (issue 26): the time from just before fork() to the first model request
 * reaching a loopback "model" (this probe's listening socket), for
 *   acp    `lousho acp SPEC --no-session`, driven as an editor drives it: initialize, then
 *          session/new, then session/prompt once session/new is answered;
 *   run    `lousho run SPEC --no-session hi`;
 *   floor  this probe re-executed to connect and write at once (spawn + exec + connect).
 * The spec (written here, beside a notes.txt) names an openai-chat provider at the socket. The
 * child is killed once the request's first bytes arrive. Prints one line per start:
 * "<wall microseconds> <CPU microseconds>", the CPU (user + system) the child used until it was
 * killed, from wait4: unlike the wall time it hardly moves with the machine's load. Usage: first_request_probe N BIN acp|run|floor */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int floor_connect(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (s < 0 || connect(s, (struct sockaddr*)&a, sizeof a) != 0) return 1;
  const char req[] = "POST /v1/chat/completions HTTP/1.1\r\n\r\n";
  return write(s, req, sizeof req - 1) > 0 ? 0 : 1;
}

/* Reads lines from fd until one contains `want` (the response of that request). */
static int wait_line(int fd, const char* want, char* buf, size_t cap, size_t* len) {
  for (;;) {
    buf[*len] = 0;
    char* hit = strstr(buf, want);
    if (hit) {
      char* nl = strchr(hit, '\n');
      if (nl) {
        size_t rest = *len - (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, rest);
        *len = rest;
        return 0;
      }
    }
    if (*len + 1 >= cap) *len = 0;
    ssize_t n = read(fd, buf + *len, cap - 1 - *len);
    if (n <= 0) return -1;
    *len += (size_t)n;
  }
}

static const char kInit[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,"
    "\"clientCapabilities\":{}}}\n";

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--connect") == 0) return floor_connect(atoi(argv[2]));
  if (argc != 4) {
    fprintf(stderr, "usage: %s N BIN acp|run|floor\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[1]);
  const char* bin = argv[2];
  const char* mode = argv[3];
  signal(SIGPIPE, SIG_IGN);
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr*)&a, sizeof a) != 0 || listen(ls, 16) != 0 ||
      getsockname(ls, (struct sockaddr*)&a, &alen) != 0) {
    perror("listen");
    return 1;
  }
  const int port = ntohs(a.sin_port);
  char dir[] = "/tmp/lousho-first-request-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char spec[256], port_text[16], self[4096];
  snprintf(spec, sizeof spec, "%s/agent.yaml", dir);
  snprintf(port_text, sizeof port_text, "%d", port);
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  self[sl > 0 ? sl : 0] = 0;
  FILE* f = fopen(spec, "w");
  if (!f) return 1;
  fprintf(f,
          "name: probe\nmodel: openai/gpt-4o-mini\ntools: [read]\nproviders:\n"
          "  openai: {api: openai-chat, baseUrl: 'http://127.0.0.1:%d/v1', apiKeyEnv: "
          "PROBE_KEY}\n",
          port);
  fclose(f);
  setenv("PROBE_KEY", "x", 1);
  setenv("LOUSHO_TEST_MODE", "1", 1);
  setenv("LOUSHO_HOME", dir, 1);
  int devnull = open("/dev/null", O_RDWR);
  char session_new[512], prompt[512];
  snprintf(session_new, sizeof session_new,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"%s\","
           "\"mcpServers\":[]}}\n",
           dir);
  snprintf(prompt, sizeof prompt,
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":"
           "\"sess-1\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n");
  for (int i = 0; i < n; ++i) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return 1;
    const double t0 = now_us();
    pid_t pid = fork();
    if (pid == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(devnull, 2);
      if (chdir(dir) != 0) _exit(127);
      if (strcmp(mode, "acp") == 0)
        execl(bin, bin, "acp", spec, "--no-session", (char*)NULL);
      else if (strcmp(mode, "run") == 0)
        execl(bin, bin, "run", spec, "--no-session", "hi", (char*)NULL);
      else
        execl(self, self, "--connect", port_text, (char*)NULL);
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (strcmp(mode, "acp") == 0) {
      char buf[65536];
      size_t len = 0;
      if (write(in[1], kInit, sizeof kInit - 1) < 0 ||
          wait_line(out[0], "\"protocolVersion\"", buf, sizeof buf, &len) != 0 ||
          write(in[1], session_new, strlen(session_new)) < 0 ||
          wait_line(out[0], "\"sessionId\"", buf, sizeof buf, &len) != 0 ||
          write(in[1], prompt, strlen(prompt)) < 0) {
        fprintf(stderr, "acp: no answer\n");
        return 1;
      }
    }
    struct pollfd p = {ls, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) {
      fprintf(stderr, "%s: no model request within 10 s\n", mode);
      return 1;
    }
    int c = accept(ls, NULL, NULL);
    char req[512];
    ssize_t got = c >= 0 ? read(c, req, sizeof req) : -1;
    const double t1 = now_us();
    if (got <= 0) return 1;
    kill(pid, SIGKILL);
    struct rusage ru;
    if (wait4(pid, NULL, 0, &ru) != pid) return 1;
    const double cpu_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
                          (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
    printf("%.0f %.0f\n", t1 - t0, cpu_us);
    fflush(stdout);
    close(c);
    close(in[1]);
    close(out[0]);
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
