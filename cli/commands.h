/* commands — the `speedup` subcommands. Each takes argv with argv[0] = its own name
 * and returns the process exit status: 0 ok, 1 failure, 2 usage error. Errors are
 * printed once, here at the CLI boundary, as "speedup: what went wrong". */
#ifndef SPEEDUP_COMMANDS_H
#define SPEEDUP_COMMANDS_H

int cmd_model(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_commbench(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
