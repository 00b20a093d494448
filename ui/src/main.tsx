// Entry point of the web app.
import { createRoot } from 'react-dom/client';
import { App } from './app/App.tsx';
import './styles.css';

createRoot(document.getElementById('root')!).render(<App />);
