/* What `nfskeys idmap`'s two files share: the setup commands (cmd-idmap-setup.c) that the
 * dispatch in cmd-idmap.c calls. */
#pragma once

/* import-conf: an idmapd.conf converted into nfskeys.conf settings */
int cmd_idmap_import_conf(int argc, char *argv[]);
/* enable-upcalls: install the request-key routing for nfskeys-upcall */
int cmd_idmap_enable_upcalls(int argc, char *argv[]);
