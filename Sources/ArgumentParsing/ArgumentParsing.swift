// ArgumentParsing module
