"""The playground: `costlang serve [FILE|DIR]`, a local page to edit a `.cost` file and watch its roofline.

`app.make_app(root)` is a Starlette application (served by uvicorn, bound to 127.0.0.1): the page and
its script (`static/`), and a JSON API that analyses the text the page sends (`/api/analyze`),
evaluates the analysed expressions at slider values without analysing again (`/api/point`), and lists
and reads the `.cost` files under the folder it serves (`/api/files`, `/api/file`). Nothing a page
sends is evaluated as Python; every analysis runs under the command line's budgets, one at a time.
"""
