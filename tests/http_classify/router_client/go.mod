module mcpclass.test/router_client

go 1.19
