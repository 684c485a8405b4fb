/* corral-jail-exec PROGRAM [ARG...]: what bwrap starts in a local jail, handed over as a
 * descriptor (bwrap runs /proc/self/fd/N), so that no file of it need be visible there.
 * It closes every descriptor above stderr, since bwrap passes on what it was given (the
 * user namespace's, its own), then becomes PROGRAM, found on PATH as a shell finds it. A
 * program that cannot be executed exits 127 or 126 with a shell's message, as on every
 * other provider, not with bwrap's "execvp" failure and status 1.
 *
 * With a Unix socket at descriptor 6 (--network allow:), the jail has a network namespace
 * of its own: the starter listens on 127.0.0.1 at a port the kernel picks, sends that
 * listening socket out over descriptor 6 to the plugin's egress proxy, which accepts the
 * jail's connections from the host side, and points the proxy variables at it. The
 * command never holds a descriptor of the proxy's, so it cannot end it for anyone else.
 *
 * With a terminal on stdin (`run -t`), the command's session is its own and has that
 * terminal as its controlling one, on stdout and stderr too, so the shell in it has job
 * control and the terminal's keys (Ctrl-C, Ctrl-Z) reach its foreground job. The terminal
 * is a pty the plugin made for this command alone, never the user's.
 *
 * Started with no arguments (bwrap never does that) it prints "corral-jail-exec N" and
 * exits 0: the plugin's probe that this is the whole starter, speaking protocol N. 
 *
 * C and, outside sanitized builds, static: it is started once a command, and a static C
 * program is ready in a fraction of the time a shell or a dynamically linked one takes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A shell's PATH when the environment has none. */
static const char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/* Closes every descriptor from 3 up; falls back to one at a time before Linux 5.9. */
static void close_from_3(void) {
  if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0) return;
  long last = sysconf(_SC_OPEN_MAX);
  if (last < 0 || last > (1L << 20)) last = 1L << 20;
  for (long fd = 3; fd < last; ++fd) close((int)fd);
}

/* Where the plugin's egress proxy waits for the jail's listening socket. */
enum { kEgressFd = 6 };

/* True when descriptor `fd` is a Unix socket: the plugin passed one for egress. */
static int is_unix_socket(int fd) {
  struct stat st;
  int domain = 0;
  socklen_t size = sizeof domain;
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
         getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) == 0 && domain == AF_UNIX;
}

/* Listens on the jail's loopback, hands the socket to the proxy and sets the proxy
 * variables. Returns 0, or -1 with a message on stderr: the command must not run without
 * the way out it was promised. */
static int start_egress(void) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (listener < 0 || bind(listener, (struct sockaddr*)&address, sizeof address) != 0 || listen(listener, 128) != 0 ||
      getsockname(listener, (struct sockaddr*)&address, &size) != 0) {
    perror("corral-jail-exec: cannot listen for the egress proxy");
    return -1;
  }
  char byte = 'L';
  struct iovec data = {&byte, 1};
  union {
    char bytes[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr message = {0};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control.bytes;
  message.msg_controllen = sizeof control.bytes;
  struct cmsghdr* rights = CMSG_FIRSTHDR(&message);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(rights), &listener, sizeof(int));
  if (sendmsg(kEgressFd, &message, MSG_NOSIGNAL) != 1) {
    perror("corral-jail-exec: cannot reach the egress proxy");
    return -1;
  }
  char proxy[64];
  snprintf(proxy, sizeof proxy, "http://127.0.0.1:%u", (unsigned)ntohs(address.sin_port));
  static const char* const kProxyVariables[] = {"http_proxy", "https_proxy", "all_proxy",
                                                "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"};
  for (size_t i = 0; i < sizeof kProxyVariables / sizeof *kProxyVariables; ++i) setenv(kProxyVariables[i], proxy, 1);
  /* Servers the command starts in the jail stay reachable directly. */
  setenv("no_proxy", "localhost,127.0.0.1,::1", 1);
  setenv("NO_PROXY", "localhost,127.0.0.1,::1", 1);
  return 0;
}

/* Says `program: why` on stderr and ends with `status`. */
static int fail(const char* program, const char* why, int status) {
  fprintf(stderr, "%s: %s\n", program, why);
  return status;
}

/* Runs `path` with `argv`; a file the kernel cannot execute by itself (no #! line) is
 * run by /bin/sh, as a shell does. Returns only on failure, with errno set. */
static void run(const char* path, char** argv, int argc) {
  execv(path, argv);
  if (errno != ENOEXEC) return;
  char** shell_argv = calloc((size_t)argc + 2, sizeof *shell_argv);
  if (!shell_argv) return;
  shell_argv[0] = "/bin/sh";
  shell_argv[1] = (char*)path;
  for (int i = 1; i < argc; ++i) shell_argv[i + 1] = argv[i];
  execv("/bin/sh", shell_argv);
  errno = ENOEXEC;
}

int main(int argc, char** argv) {
  const int egress = argc >= 2 && is_unix_socket(kEgressFd);
  if (egress && start_egress() != 0) return 126;
  close_from_3();
  if (argc < 2) {
    fputs("corral-jail-exec " CORRAL_JAIL_EXEC_PROTOCOL "\n", stdout);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (isatty(0)) {
    if (setsid() < 0 || ioctl(0, TIOCSCTTY, 0) != 0 || dup2(0, 1) != 1 || dup2(0, 2) != 2) {
      perror("corral-jail-exec: cannot take the command's terminal");
      return 126;
    }
  }
  const char* program = argv[1];
  char** program_argv = argv + 1;
  const int program_argc = argc - 1;
  if (strchr(program, '/')) {
    if (access(program, F_OK) != 0) return fail(program, "No such file or directory", 127);
    run(program, program_argv, program_argc);
    return fail(program, errno == ENOENT ? "No such file or directory" : "Permission denied",
                errno == ENOENT ? 127 : 126);
  }
  const char* path = getenv("PATH");
  if (!path) path = kDefaultPath;
  /* As a shell: the first folder holding an executable file of that name wins; one
   * holding a file that cannot be executed is remembered (126), the search goes on. */
  int denied = 0;
  const size_t name_length = strlen(program);
  for (const char* dir = path;; ) {
    const char* end = strchrnul(dir, ':');
    const size_t dir_length = (size_t)(end - dir);
    char* candidate = malloc(dir_length + name_length + 3);
    if (!candidate) return fail(program, "out of memory", 126);
    if (dir_length == 0) {
      candidate[0] = '.';
      candidate[1] = '\0';
    } else {
      memcpy(candidate, dir, dir_length);
      candidate[dir_length] = '\0';
    }
    strcat(candidate, "/");
    strcat(candidate, program);
    struct stat st;
    if (stat(candidate, &st) == 0 && !S_ISDIR(st.st_mode)) {
      run(candidate, program_argv, program_argc);
      if (errno == EACCES || errno == EPERM) denied = 1;
    }
    free(candidate);
    if (*end == '\0') break;
    dir = end + 1;
  }
  return denied ? fail(program, "Permission denied", 126) : fail(program, "command not found", 127);
}
