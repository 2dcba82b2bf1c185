module mcpclass

go 1.19
