/* `verifetch mcp`: MCP over stdin/stdout for a host's config. Holds no keys
 * and fetches nothing: every tools/call is forwarded to verifetchd. */
#ifndef VERIFETCH_CLI_MCP_STDIO_H
#define VERIFETCH_CLI_MCP_STDIO_H

/* argv[0] is "mcp". Returns the process exit code. */
int vf_cli_mcp_main(int argc, char **argv);

#endif
