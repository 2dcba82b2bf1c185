module github.com/mcpclass/mcpclass/bindings/go

go 1.19
