# Pauses over time in bench/wb-kernel.ktest's split case (bulk writer on the slow mount,
# interactive writer on the fast one), one panel per configuration:
#   gnuplot -e "dir='_build/dev/tests/kernel/wb-kernel.results/wb-kernel'; out='doc/writeback'" \
#       bench/wb-kernel.gp
# writes out/wb-kernel-bulk.png (each 1 MiB write()'s duration) and
# out/wb-kernel-fsync.png (each 4 KiB fsync()'s duration).  configs may be set with -e
# too (default: the four configurations of the bench), and tag (e.g. tag='-6.12': the
# files are then out/wb-kernel-6.12-bulk.png and out/wb-kernel-6.12-fsync.png; title
# gets it too).
if (!exists("dir")) dir = "."
if (!exists("out")) out = "."
if (!exists("tag")) tag = ""
if (!exists("configs")) configs = "default static adaptive-halve adaptive-nfskeys"
n = words(configs)

set terminal pngcairo size 900, 220 * n font ",9"
set logscale y
set format y "%g"
set grid ytics
set key top right

set output out . "/wb-kernel" . tag . "-bulk.png"
set multiplot layout n, 1 title "bulk writer on the slow mount" . (tag eq "" ? "" : " (" . tag[2:] . ")") . ": write() duration (ms) over time (s)"
do for [i = 1:n] {
	c = word(configs, i)
	set yrange [0.1:10000]
	plot dir . "/" . c . "-split-bulk.tsv" using ($1 / 1e6):($2 / 1e3) with points pt 7 ps 0.3 \
		title c . ": each 1 MiB write()"
}
unset multiplot

set output out . "/wb-kernel" . tag . "-fsync.png"
set multiplot layout n, 1 title "interactive writer on the fast mount" . (tag eq "" ? "" : " (" . tag[2:] . ")") . ": fsync() duration (ms) over time (s)"
do for [i = 1:n] {
	c = word(configs, i)
	set yrange [0.1:10000]
	plot dir . "/" . c . "-split-inter.tsv" using ($1 / 1e6):($3 / 1e3) with linespoints \
		pt 7 ps 0.3 title c . ": fsync()", \
		'' using ($1 / 1e6):($2 / 1e3) with points pt 6 ps 0.3 title "its 4 KiB write()"
}
unset multiplot
