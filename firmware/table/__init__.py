"""The live table (issue 24, docs/protocols/table.md): the table controller, which runs the round for
up to seven player stations and alone decides outcomes, and the station's link to it."""
