/* test-sshd.h — a real OpenSSH server for the remote-worker tests
 * (test-worker-remote.c, test-app.c): sshd on 127.0.0.1 and a free port,
 * with a host key and an authorized key made for the test in a temporary
 * folder, and ssh configs for it; TRACESCOPE_SSH_CONFIG and
 * TRACESCOPE_REMOTE_WORKER set so that a TsWorker made remote with
 * sshd_target runs `worker` there.  Without sshd (not installed, cannot
 * start) sshd_skip_reason says why. */
#pragma once

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

#include "test-wait.h"

#define TEST_SSHD "/usr/sbin/sshd"

static char *sshd_dir;           /* the temporary folder: keys, configs */
static char *sshd_target;        /* "127.0.0.1:PORT" */
static GSubprocess *sshd_process;
static char *sshd_skip_reason;   /* sshd could not be set up: why */

/* ---- the server ------------------------------------------------------------------ */

static gboolean sshd_run_tool(const char *const *argv, GError **error)
{
  g_autoptr(GSubprocess) p = g_subprocess_newv(argv, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, error);
  if (!p || !g_subprocess_wait_check(p, NULL, error))
    return FALSE;
  return TRUE;
}

static int sshd_free_port(void)
{
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  g_assert_true(bind(s, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(s, (struct sockaddr *)&a, &len) == 0);
  close(s);
  return ntohs(a.sin_port);
}

static gboolean sshd_port_open(int port)
{
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((guint16)port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  gboolean ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
  close(s);
  return ok;
}

typedef struct {
  int port;
  gboolean listening;
} sshd_wait;

static gboolean sshd_listening_or_gone(gpointer data)
{
  sshd_wait *w = data;
  w->listening = sshd_port_open(w->port);
  return w->listening || g_subprocess_get_identifier(sshd_process) == NULL;
}

static gboolean sshd_tick(gpointer data)
{
  return G_SOURCE_CONTINUE; /* wakes the loop to look again */
}

static char *sshd_path_in(const char *name)
{
  return g_build_filename(sshd_dir, name, NULL);
}

static void sshd_write_file(const char *name, const char *text)
{
  g_autofree char *path = sshd_path_in(name);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &error));
}

/* An ssh config for the test's server: its key (or key_file), its host key
 * known (or not), the worker's environment passed along (AcceptEnv). */
static void sshd_write_ssh_config(const char *name, const char *key_file, gboolean host_known)
{
  g_autofree char *key = sshd_path_in(key_file), *known = sshd_path_in(host_known ? "known_hosts" : "no_known_hosts");
  /* the worker's environment as here, so that it computes the same (OpenBLAS's core, threads) */
  g_autoptr(GString) env = g_string_new("  SetEnv");
  static const char *const passed[] = { "TRACESCOPE_SEEDS", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                        "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE" };
  for (guint i = 0; i < G_N_ELEMENTS(passed); i++)
    if (g_getenv(passed[i]))
      g_string_append_printf(env, " %s=%s", passed[i], g_getenv(passed[i]));
  g_autofree char *text = g_strdup_printf("Host 127.0.0.1\n"
                                          "  User %s\n"
                                          "  IdentityFile %s\n"
                                          "  IdentitiesOnly yes\n"
                                          "  IdentityAgent none\n"
                                          "  UserKnownHostsFile %s\n"
                                          "  GlobalKnownHostsFile /dev/null\n"
                                          "  StrictHostKeyChecking yes\n"
                                          "  LogLevel ERROR\n"
                                          "%s\n",
                                          g_get_user_name(), key, known, env->str);
  sshd_write_file(name, text);
}

static void sshd_die_with_test(gpointer data)
{
  prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static gboolean test_sshd_start(const char *worker)
{
  g_autofree char *keygen = g_find_program_in_path("ssh-keygen");
  if (!g_file_test(TEST_SSHD, G_FILE_TEST_IS_EXECUTABLE) || !keygen) {
    sshd_skip_reason = g_strdup("OpenSSH's sshd or ssh-keygen is not installed (scripts/install-deps.sh installs "
                           "openssh-server and openssh-client)");
    return FALSE;
  }
  /* as root sshd insists on its privilege separation directory */
  if (getuid() == 0 && !g_file_test("/run/sshd", G_FILE_TEST_IS_DIR) && mkdir("/run/sshd", 0755) != 0) {
    sshd_skip_reason = g_strdup_printf("sshd needs /run/sshd, which cannot be made: %s", g_strerror(errno));
    return FALSE;
  }
  g_autoptr(GError) error = NULL;
  sshd_dir = g_dir_make_tmp("tracescope-remote-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *host_key = sshd_path_in("host_key"), *user_key = sshd_path_in("user_key");
  g_assert_true(sshd_run_tool((const char *const[]){ "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", host_key, NULL },
                    &error));
  g_assert_true(sshd_run_tool((const char *const[]){ "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", user_key, NULL },
                    &error));
  g_assert_no_error(error);
  int port = sshd_free_port();
  sshd_target = g_strdup_printf("127.0.0.1:%d", port);
  g_autofree char *host_pub = NULL, *user_pub = NULL, *host_pub_path = sshd_path_in("host_key.pub"),
                  *user_pub_path = sshd_path_in("user_key.pub");
  g_assert_true(g_file_get_contents(host_pub_path, &host_pub, NULL, NULL));
  g_assert_true(g_file_get_contents(user_pub_path, &user_pub, NULL, NULL));
  sshd_write_file("authorized_keys", user_pub);
  g_autofree char *known = g_strdup_printf("[127.0.0.1]:%d %s", port, host_pub);
  sshd_write_file("known_hosts", known);
  sshd_write_file("no_known_hosts", "");
  g_autofree char *authorized = sshd_path_in("authorized_keys"), *pid = sshd_path_in("sshd.pid");
  g_autofree char *sshd_config = g_strdup_printf(
    "ListenAddress 127.0.0.1:%d\n"
    "HostKey %s\n"
    "AuthorizedKeysFile %s\n"
    "PidFile %s\n"
    "StrictModes no\n"
    "UsePAM no\n"
    "PasswordAuthentication no\n"
    "KbdInteractiveAuthentication no\n"
    "PermitRootLogin prohibit-password\n"
    "AcceptEnv TRACESCOPE_* ASAN_OPTIONS UBSAN_OPTIONS OPENBLAS_*\n"
    "LogLevel ERROR\n",
    port, host_key, authorized, pid);
  sshd_write_file("sshd_config", sshd_config);
  sshd_write_ssh_config("ssh_config", "user_key", TRUE);
  sshd_write_ssh_config("ssh_config_nokey", "no_such_key", TRUE);
  sshd_write_ssh_config("ssh_config_unknown", "user_key", FALSE);
  g_autofree char *config = sshd_path_in("sshd_config"), *log = sshd_path_in("sshd.log");
  /* its log in the folder, and it ends with the test, whatever ends the test */
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_set_child_setup(launcher, sshd_die_with_test, NULL, NULL);
  sshd_process = g_subprocess_launcher_spawnv(launcher, (const char *const[]){ TEST_SSHD, "-D", "-E", log, "-f", config, NULL },
                                      &error);
  if (!sshd_process) {
    sshd_skip_reason = g_strdup_printf("sshd does not start: %s", error->message);
    return FALSE;
  }
  /* listening, or gone: sshd says neither, so the main loop checks the
   * state every few milliseconds (test_wait_for's timeout is the net) */
  sshd_wait wait = { .port = port };
  guint tick = g_timeout_add(5, sshd_tick, NULL);
  test_wait_for(sshd_listening_or_gone, &wait, "sshd to listen");
  g_source_remove(tick);
  if (!wait.listening) {
    sshd_skip_reason = g_strdup_printf("sshd ended or did not listen (its log: %s)", log);
    return FALSE;
  }
  g_autofree char *ssh_config = sshd_path_in("ssh_config");
  g_setenv("TRACESCOPE_SSH_CONFIG", ssh_config, TRUE);
  g_setenv("TRACESCOPE_REMOTE_WORKER", worker, TRUE);
  return TRUE;
}

static void test_sshd_stop(void)
{
  if (sshd_process) {
    g_subprocess_force_exit(sshd_process);
    g_subprocess_wait(sshd_process, NULL, NULL);
    g_clear_object(&sshd_process);
  }
  if (sshd_dir) {
    g_autofree char *rm = g_strdup_printf("rm -rf %s", sshd_dir);
    g_assert_true(system(rm) == 0);
  }
  g_clear_pointer(&sshd_dir, g_free);
  g_clear_pointer(&sshd_target, g_free);
  g_clear_pointer(&sshd_skip_reason, g_free);
}
