/* wbsim's output files: a run's CSV time series and a scenario's gnuplot figure (one
 * column per policy), gnuplot started with posix_spawnp. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spawn.h>
#include <sys/wait.h>

#include "macros.h"
#include "wbsim-private.h"

extern char **environ;

/* ---------------------------------------------------------------- output */

int wbsim_write_csv(const char *dir, const struct sim *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%s.csv", dir, s->sc->name,
		 nfskeys_wb_policy_to_name(s->policy));
	f = fopen(path, "we");
	if (!f)
		return negerrno();
	fprintf(f, "t,dirty_mib,limit_mib,setpoint_mib,unstable_mib,bw_mibps,waiters\n");
	for (size_t i = 0; i < s->nser; i++) {
		const struct series *r = &s->ser[i];

		fprintf(f, "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%u\n", r->t, r->dirty, r->limit,
			r->setpoint, r->unstable, r->bw, r->waiters);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s-%s-rates.csv", dir, s->sc->name,
		 nfskeys_wb_policy_to_name(s->policy));
	f = fopen(path, "we");
	if (!f)
		return negerrno();
	fprintf(f, "t,dirty_rate_mibps,write_rate_mibps");
	for (int k = 0; k < MAX_PLOT_TASKS; k++)
		fprintf(f, ",task%d_mibps", k);
	fputc('\n', f);
	for (size_t i = 0; i < s->nrat; i++) {
		const struct rates *r = &s->rat[i];

		fprintf(f, "%.3f,%.3f,%.3f", r->t, r->dirty_rate, r->write_rate);
		for (int k = 0; k < MAX_PLOT_TASKS; k++)
			fprintf(f, ",%.3f", r->task[k]);
		fputc('\n', f);
	}
	fclose(f);
	return 0;
}

/* One figure per scenario: a column per policy, dirty data on top, task rates below. */
int wbsim_write_plot(const char *dir, const char *fmt, const struct scenario *sc,
		      const int *pols, int npols)
{
	char path[4096], out[4096];
	FILE *f;
	pid_t pid;
	int status;
	char *argv[3] = { "gnuplot", path, NULL };
	int ntask = MIN(sc->heavy + sc->medium + sc->light, MAX_PLOT_TASKS);

	snprintf(path, sizeof(path), "%s/%s.gp", dir, sc->name);
	snprintf(out, sizeof(out), "%s/%s.%s", dir, sc->name, fmt);
	f = fopen(path, "we");
	if (!f)
		return negerrno();
	fprintf(f, "set datafile separator ','\n");
	if (streq(fmt, "svg"))
		fprintf(f, "set terminal svg size %d,640 dynamic font 'sans,10'\n", 420 * npols);
	else
		fprintf(f, "set terminal pngcairo size %d,640 font 'sans,9'\n", 420 * npols);
	fprintf(f, "set output '%s'\nset multiplot layout 2,%d title '%s: %s'\n", out, npols,
		sc->name, sc->help);
	fprintf(f, "set grid\nset key top right font ',8'\nset xlabel 's'\n");
	for (int i = 0; i < npols; i++) {
		const char *p = nfskeys_wb_policy_to_name(pols[i]);

		fprintf(f, "set title '%s'\nset ylabel 'MiB'\nset yrange [0:*]\n", p);
		fprintf(f, "plot '%s/%s-%s.csv' every ::1 using 1:2 with lines lw 1.5 title 'dirty', "
			   "'' every ::1 using 1:4 with lines dt 2 title 'setpoint', "
			   "'' every ::1 using 1:3 with lines lw 2 lc rgb 'red' title 'limit'",
			dir, sc->name, p);
		if (sc->dev == DEV_NFS)
			fprintf(f, ", '' every ::1 using 1:5 with lines lc rgb 'gray' title 'unstable'");
		fputc('\n', f);
	}
	for (int i = 0; i < npols; i++) {
		const char *p = nfskeys_wb_policy_to_name(pols[i]);

		fprintf(f, "set title '%s: per-task dirty rate (100 ms bins)'\nset ylabel 'MiB/s'\n", p);
		fprintf(f, "plot '%s/%s-%s-rates.csv' every ::1 using 1:2 with lines lc rgb 'black' "
			   "title 'all tasks'",
			dir, sc->name, p);
		for (int k = 0; k < ntask; k++)
			fprintf(f, ", '' every ::1 using 1:%d with lines notitle", 4 + k);
		fputc('\n', f);
	}
	fprintf(f, "unset multiplot\n");
	fclose(f);
	if (posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ) != 0)
		return -ENOENT;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	return 0;
}
