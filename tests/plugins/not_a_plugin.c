/* A shared library that is not a sampcert plug-in: it exports no entry point. */
int not_a_plugin_answer(void);
int not_a_plugin_answer(void) { return 42; }
