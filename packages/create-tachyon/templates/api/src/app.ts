// The app: routes, validation and errors. It does not listen: src/server.ts does, and the
// tests call app.request() on it without a port.
import { App, HttpError, health } from '@tachyon/server';
import { z } from 'zod';

const NewTodo = z.object({ title: z.string().trim().min(1).max(200), done: z.boolean().default(false) });
const TodoId = z.object({ id: z.coerce.number().int().positive() });
type Todo = z.infer<typeof NewTodo> & { id: number };

export function createApp(): App {
  const app = new App();
  app.use(health()); // GET /healthz (liveness) and /readyz (readiness): first, before anything that may refuse

  // In memory to keep the template small: swap the Map for your database.
  const todos = new Map<number, Todo>();
  let nextId = 1;

  app.get('/', () => ({ name: 'tachyon api', routes: ['GET /todos', 'POST /todos', 'GET /todos/:id', 'DELETE /todos/:id'] }));
  app.get('/todos', () => [...todos.values()]);
  app.get('/todos/:id', { params: TodoId }, (req) => {
    const todo = todos.get(req.params.id); // req.params.id: number, coerced by the schema
    if (!todo) throw new HttpError(404, `no todo ${req.params.id}`);
    return todo;
  });
  app.post('/todos', { body: NewTodo }, (req, res) => {
    const todo: Todo = { id: nextId++, ...req.body };
    todos.set(todo.id, todo);
    res.status(201);
    return todo;
  });
  app.delete('/todos/:id', { params: TodoId }, (req, res) => {
    if (!todos.delete(req.params.id)) throw new HttpError(404, `no todo ${req.params.id}`);
    res.status(204).end();
  });
  return app;
}
