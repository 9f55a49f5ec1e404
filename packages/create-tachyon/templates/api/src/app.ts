// The app: routes, validation and errors. It does not listen: src/server.ts does, and the
// tests call app.request() on it without a port. The routes are chained: each one adds itself
// to the app's type, which the typed client (test/client.test.ts) reads (`client<Api>`).
import { App, HttpError, health } from '@tachyon/server';
import { z } from 'zod';

const NewTodo = z.object({ title: z.string().trim().min(1).max(200), done: z.boolean().default(false) });
const TodoId = z.object({ id: z.coerce.number().int().positive() });
const Todo = z.object({ id: z.number(), title: z.string(), done: z.boolean() });
/** What `throw new HttpError(404, …)` answers. */
const Problem = z.object({ error: z.string() });
type Todo = z.infer<typeof Todo>;

export function createApp() {
  // In memory to keep the template small: swap the Map for your database.
  const todos = new Map<number, Todo>();
  let nextId = 1;

  return new App()
    .use(health()) // GET /healthz (liveness) and /readyz (readiness): first, before anything that may refuse
    .get('/', () => ({ name: 'tachyon api', routes: ['GET /todos', 'POST /todos', 'GET /todos/:id', 'DELETE /todos/:id'] }))
    .get('/todos', { response: { 200: z.array(Todo) } }, () => [...todos.values()])
    .get('/todos/:id', { params: TodoId, response: { 200: Todo, 404: Problem } }, (req) => {
      const todo = todos.get(req.params.id); // req.params.id: number, coerced by the schema
      if (!todo) throw new HttpError(404, `no todo ${req.params.id}`);
      return todo;
    })
    .post('/todos', { body: NewTodo, response: { 201: Todo } }, (req, res) => {
      const todo: Todo = { id: nextId++, ...req.body };
      todos.set(todo.id, todo);
      res.status(201);
      return todo;
    })
    .delete('/todos/:id', { params: TodoId, response: { 204: z.undefined(), 404: Problem } }, (req, res) => {
      if (!todos.delete(req.params.id)) throw new HttpError(404, `no todo ${req.params.id}`);
      res.status(204).end();
    });
}

/** The app's type: what `client<Api>(url)` (from `@tachyon/client/http`) is typed from. */
export type Api = ReturnType<typeof createApp>;
